"""The README's .pre-commit-config.yaml block, run by pre-commit itself in a benchmark
repository: the `local` hook runs the installed infx, gates a contributor's branch, and
refuses a merge commit that dropped main's entries."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

from tests.conftest import HISTORY, LINK, GitRepo, entry
from tests.readme import readme_block, use_readme_driver

ROOT = Path(__file__).resolve().parents[1]
BIN = Path(sys.executable).parent
_BESIDE = BIN / "pre-commit"
PRE_COMMIT = str(_BESIDE) if _BESIDE.exists() else shutil.which("pre-commit")
needs_pre_commit = pytest.mark.skipif(PRE_COMMIT is None, reason="pre-commit is not installed")


def hook_config() -> str:
    return readme_block("yaml", "repos:")


def test_the_readme_hook_is_the_published_hook_run_locally() -> None:
    """The local hook and .pre-commit-hooks.yaml (for a `repo:` pointing at a copy of infx)
    run the same command on the same files."""
    (hook_repo,) = yaml.safe_load(hook_config())["repos"]
    assert hook_repo["repo"] == "local"
    (local,) = hook_repo["hooks"]
    (published,) = yaml.safe_load((ROOT / ".pre-commit-hooks.yaml").read_text())
    assert local["language"] == "system"
    for key in ("id", "name", "entry", "files", "pass_filenames"):
        assert local[key] == published[key], key


def _env(tmp_path: Path, path: str) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("GITHUB_", "INFX_", "VIRTUAL"))}
    return {**env, "PRE_COMMIT_HOME": str(tmp_path / "pre-commit-home"), "PATH": path}


def _run(cmd: list[str], repo: Path, env: dict[str, str]) -> subprocess.CompletedProcess[str]:
    return subprocess.run(cmd, cwd=repo, capture_output=True, text=True, env=env, timeout=900)


@needs_pre_commit
def test_pre_commit_runs_the_hook_on_a_branch(repo: GitRepo, tmp_path: Path) -> None:
    assert PRE_COMMIT is not None
    repo.commit("hook", **{".pre-commit-config.yaml": hook_config()})
    repo.git("update-ref", "refs/remotes/origin/main", "HEAD")
    repo.git("checkout", "-q", "-b", "feature")
    env = _env(tmp_path, f"{BIN}{os.pathsep}{os.environ['PATH']}")

    repo.write("perf-changelog.yaml", HISTORY + "\n" + entry())
    repo.git("add", "perf-changelog.yaml")
    ok = _run([PRE_COMMIT, "run", "--files", "perf-changelog.yaml"], repo.path, env)
    assert ok.returncode == 0, ok.stdout + ok.stderr
    assert "perf-changelog gate" in ok.stdout and "Passed" in ok.stdout

    repo.write("perf-changelog.yaml", HISTORY.replace("Bring up", "Brought up") + "\n" + entry())
    repo.git("add", "perf-changelog.yaml")
    bad = _run([PRE_COMMIT, "run", "--files", "perf-changelog.yaml"], repo.path, env)
    assert bad.returncode == 1
    assert "Failed" in bad.stdout and "history" in bad.stdout
    assert "on main" not in bad.stdout


@needs_pre_commit
def test_the_hook_refuses_a_merge_commit_that_dropped_mains_entry(
    repo: GitRepo, tmp_path: Path
) -> None:
    """The README's hook and driver. git merge runs where infx is not on PATH (a shell
    without the virtualenv): the driver's guard leaves markers; the contributor keeps
    their own side anyway, and the hook stops the merge commit, naming main's entry."""
    assert PRE_COMMIT is not None
    bare = "/usr/bin:/bin"
    if shutil.which("infx", path=bare):
        pytest.skip("infx is installed system-wide")
    with_infx = _env(tmp_path, f"{BIN}{os.pathsep}{os.environ['PATH']}")
    use_readme_driver(repo, with_infx)
    repo.commit("adopt", **{".pre-commit-config.yaml": hook_config()})
    installed = _run([PRE_COMMIT, "install"], repo.path, with_infx)
    assert installed.returncode == 0, installed.stdout + installed.stderr

    repo.git("update-ref", "refs/remotes/origin/main", "HEAD")

    def commit(message: str, text: str) -> None:
        repo.write("perf-changelog.yaml", text)
        repo.git("add", "perf-changelog.yaml")
        made = _run(["git", "commit", "-q", "-m", message], repo.path, with_infx)
        assert made.returncode == 0, made.stdout + made.stderr

    repo.git("checkout", "-q", "-b", "feature")
    ours = HISTORY + "\n" + entry(description="branch change")
    commit("branch work", ours)
    repo.git("checkout", "-q", "main")
    theirs = HISTORY + "\n" + entry(link=f"{LINK}3", description="main's own change")
    commit("main moves", theirs)
    repo.git("update-ref", "refs/remotes/origin/main", "HEAD")
    repo.git("checkout", "-q", "feature")

    merge = _run(["git", "merge", "--no-edit", "origin/main"], repo.path, _env(tmp_path, bare))
    assert merge.returncode != 0
    assert "<<<<<<< ours" in repo.read().decode()
    repo.git("checkout", "--ours", "perf-changelog.yaml")
    repo.git("add", "perf-changelog.yaml")
    commit = _run(["git", "commit", "--no-edit"], repo.path, with_infx)
    assert commit.returncode != 0, commit.stdout
    assert "this merge drops the entry main added at its line 13" in commit.stdout + commit.stderr
    assert repo.git("rev-parse", "-q", "--verify", "MERGE_HEAD", check=False)

    # Both sides back, resolved as the message says: the commit goes through.
    repo.git("checkout", "--merge", "--", "perf-changelog.yaml")
    resolved = _run(["infx", "changelog", "resolve-conflict"], repo.path, with_infx)
    assert resolved.returncode == 0, resolved.stdout + resolved.stderr
    done = _run(["git", "commit", "--no-edit"], repo.path, with_infx)
    assert done.returncode == 0, done.stdout + done.stderr
    assert repo.read().decode() == theirs + "\n" + entry(description="branch change")
