"""The git edge: named helpers on real repositories, deaf to variables that redirect git."""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

import pytest

from infx import git
from tests.conftest import HISTORY, GitRepo, entry, make_repo


def redirect(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> GitRepo:
    """Another repository that GIT_DIR, GIT_INDEX_FILE and GIT_WORK_TREE point at from now
    on, as when git runs a hook or a merge driver."""
    other = make_repo(tmp_path / "decoy")
    monkeypatch.setenv("GIT_DIR", str(other.path / ".git"))
    monkeypatch.setenv("GIT_INDEX_FILE", str(other.path / ".git" / "index"))
    monkeypatch.setenv("GIT_WORK_TREE", str(other.path))
    return other


def clean_git(path: Path, *args: str) -> str:
    """git with the redirecting variables removed, to set up and look at the result."""
    env = {k: v for k, v in os.environ.items() if k not in git.REDIRECTING_ENV}
    return subprocess.run(
        ["git", *args], cwd=path, capture_output=True, text=True, env=env, check=True
    ).stdout.strip()


def test_gate_reads_the_repository_of_its_cwd(repo: GitRepo, tmp_path, monkeypatch) -> None:
    repo.commit(**{"perf-changelog.yaml": HISTORY + "\n" + entry(link="TBD")})
    redirect(tmp_path, monkeypatch)
    result = repo.infx("changelog", "check", "--base", "base", "--head", "HEAD", "--pr", "7")
    assert result.exit_code == 1 and "'TBD' is not accepted" in result.output


def test_worktree_merge_commit_push_act_on_cwd_repository(
    repo: GitRepo, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    origin = tmp_path / "origin.git"
    repo.git("init", "-q", "--bare", str(origin))
    repo.git("remote", "set-url", "origin", str(origin))
    repo.git("push", "-q", "origin", "main")
    repo.git("checkout", "-q", "-b", "side")
    repo.commit("side", **{"note.txt": "side\n"})
    repo.git("checkout", "-q", "main")
    decoy = redirect(tmp_path, monkeypatch)

    git.fetch("origin", ["main"], repo.path)
    start = git.rev_parse("origin/main", repo.path)
    with git.worktree(repo.path, start) as work:
        assert git.merge("side", work) is True
        head = git.commit(work, "empty", allow_empty=True)
        git.push("origin", "HEAD:refs/heads/updated", work)
    assert clean_git(repo.path, "worktree", "list").count("\n") == 0
    assert clean_git(origin, "rev-parse", "updated") == head
    assert clean_git(decoy.path, "log", "--format=%s") == "base"


def test_index_stages_are_read_by_stage_number(repo: GitRepo) -> None:
    """A file added on both sides has no stage 1; ours and theirs must not shift into it."""
    repo.git("checkout", "-q", "-b", "pr")
    repo.commit("pr", **{"new.yaml": "pr\n"})
    repo.git("checkout", "-q", "main")
    repo.commit("main", **{"new.yaml": "main\n"})
    repo.git("checkout", "-q", "pr")
    assert git.merge("main", repo.path) is False
    assert git.conflicted_paths(repo.path) == ["new.yaml"]
    assert git.index_stages("new.yaml", repo.path) == git.IndexStages(None, b"pr\n", b"main\n")
    assert git.index_stages("perf-changelog.yaml", repo.path) is None


def test_merge_failure_without_conflicts_is_a_git_error(repo: GitRepo) -> None:
    with pytest.raises(git.GitError, match="git merge failed"):
        git.merge("no-such-branch", repo.path)


def test_resolve_all_names_each_tree_and_the_unknown_ref(tmp_path) -> None:
    from infx.errors import GitError

    repo = make_repo(tmp_path / "r")
    repo.commit("second", **{"x.txt": "x"})
    trees = git.resolve_all(["HEAD~1", "HEAD"], repo.path)
    assert trees == [git.resolve("HEAD~1", repo.path), git.resolve("HEAD", repo.path)]
    assert trees[0] != trees[1]
    with pytest.raises(GitError, match="unknown git ref 'nope'"):
        git.resolve_all(["HEAD", "nope"], repo.path)
    with pytest.raises(GitError, match="unknown git ref '--all'"):
        git.resolve_all(["--all"], repo.path)
    # Bytes that are not UTF-8 (a shell passes them as surrogates): git echoes the ref on
    # stdout, whose decoding crashed (UnicodeDecodeError, exit 3).
    with pytest.raises(GitError, match=r"unknown git ref 'HEAD\\udcff'"):
        git.resolve_all(["HEAD\udcff", "HEAD"], repo.path)


def test_reading_a_folder_among_files_leaves_the_other_files_intact(repo: GitRepo) -> None:
    """One `cat-file --batch` reads many paths; a folder among them is no file, and the
    files after it still read as they are (a folder's listing once shifted them all)."""
    repo.commit(**{"recipes__common__a.sh": "echo a\n", "recipes__b.sh": "echo b\n"})
    tree = repo.git("rev-parse", "HEAD^{tree}")
    found = git.read_blobs(
        tree, ["recipes/common", "recipes/b.sh", "nothere", "recipes/common/a.sh"], repo.path
    )
    assert found == {
        "recipes/common": None,
        "recipes/b.sh": b"echo b\n",
        "nothere": None,
        "recipes/common/a.sh": b"echo a\n",
    }
