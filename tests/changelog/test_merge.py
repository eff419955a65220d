"""Changelog merge conflicts resolve without a human: resolve-conflict and the merge driver."""

from __future__ import annotations

from tests.conftest import HISTORY, LINK, GitRepo, entry

MAIN_ENTRY = entry(keys=["llama-fp8-mi355x-sglang"], link=f"{LINK}30", description="Main change")
PR_ENTRY = entry(description="PR change")


def diverge(repo: GitRepo) -> None:
    """main and a PR branch both append after the same base, so git sees a conflict."""
    repo.git("checkout", "-q", "-b", "pr")
    repo.commit("pr entry", **{"perf-changelog.yaml": HISTORY + "\n" + PR_ENTRY})
    repo.git("checkout", "-q", "main")
    repo.commit("main entry", **{"perf-changelog.yaml": HISTORY + "\n" + MAIN_ENTRY})
    repo.git("checkout", "-q", "pr")


def test_resolve_conflict_keeps_main_then_pr(repo: GitRepo) -> None:
    diverge(repo)
    repo.git("merge", "main", check=False)
    assert "perf-changelog.yaml" in repo.git("diff", "--name-only", "--diff-filter=U")
    result = repo.infx("changelog", "resolve-conflict", "--pr", "31")
    assert result.exit_code == 0, result.output
    expected = HISTORY + "\n" + MAIN_ENTRY + "\n" + entry(description="PR change", link=f"{LINK}31")
    assert repo.read().decode() == expected
    assert repo.git("diff", "--name-only", "--diff-filter=U") == ""
    repo.git("commit", "-q", "--no-edit")
    check = repo.infx("changelog", "check", "--base", "main", "--head", "HEAD", "--pr", "31")
    assert check.exit_code == 0, check.output


def test_resolve_conflict_skips_entries_main_already_holds(repo: GitRepo) -> None:
    repo.git("checkout", "-q", "-b", "pr")
    repo.commit("pr entry", **{"perf-changelog.yaml": HISTORY + "\n" + PR_ENTRY})
    repo.git("checkout", "-q", "main")
    landed = entry(description="PR change", link=f"{LINK}31")
    repo.commit("main", **{"perf-changelog.yaml": HISTORY + "\n" + MAIN_ENTRY + "\n" + landed})
    repo.git("checkout", "-q", "pr")
    repo.git("merge", "main", check=False)
    repo.infx("changelog", "resolve-conflict", "--pr", "31")
    assert repo.read().decode() == HISTORY + "\n" + MAIN_ENTRY + "\n" + landed


def test_resolve_conflict_without_conflict_is_usage_error(repo: GitRepo) -> None:
    result = repo.infx("changelog", "resolve-conflict", "--pr", "31")
    assert result.exit_code == 2 and "no merge conflict" in result.output


def test_merge_driver_lets_git_merge_cleanly(repo: GitRepo) -> None:
    repo.write(".gitattributes", "perf-changelog.yaml merge=infx-changelog\n")
    repo.git("add", ".gitattributes")
    repo.git("commit", "-q", "-m", "attributes")
    repo.git("tag", "-f", "base")
    import shutil
    import sys

    infx_cmd = shutil.which("infx") or f"{sys.executable} -m infx"
    repo.git("config", "merge.infx-changelog.name", "perf-changelog.yaml append merge")
    repo.git(
        "config",
        "merge.infx-changelog.driver",
        f"{infx_cmd} changelog merge-driver --pr 31 --repo acme/bench %O %A %B %P",
    )
    diverge(repo)
    out = repo.git("merge", "-q", "--no-edit", "main")
    assert "CONFLICT" not in out
    expected = HISTORY + "\n" + MAIN_ENTRY + "\n" + entry(description="PR change", link=f"{LINK}31")
    assert repo.read().decode() == expected


def test_merge_driver_refuses_history_edits(repo: GitRepo, tmp_path) -> None:
    ancestor = tmp_path / "o"
    ours = tmp_path / "a"
    theirs = tmp_path / "b"
    ancestor.write_text(HISTORY)
    ours.write_text(HISTORY.replace("Bring up", "Brought up") + "\n" + PR_ENTRY)
    theirs.write_text(HISTORY + "\n" + MAIN_ENTRY)
    result = repo.infx(
        "changelog", "merge-driver", str(ancestor), str(ours), str(theirs), "perf-changelog.yaml"
    )
    assert result.exit_code == 1 and "does more than append" in result.output
    assert ours.read_text().startswith(HISTORY.replace("Bring up", "Brought up"))
