"""Two byte-identical appends: git merges the two identical files as one without asking the
merge driver, so the PR's entry becomes main's. The gate tells the PR, which then shows no
appended entry of its own although its commits appended one."""

from __future__ import annotations

import os
import sys
from pathlib import Path

from tests.changelog.test_merge import git_merge
from tests.conftest import HISTORY, GitRepo, entry
from tests.readme import use_readme_driver

# Another PR landed on main with this text, placeholder link included (history holds such
# entries), and this PR appended the very same bytes.
SAME = entry(description="Raise the concurrency ceiling")


def _identical_appends(repo: GitRepo) -> str:
    """The README's driver configured; main and the branch `feature` append SAME; the branch
    merges main. Returns the branch's own commit."""
    path = f"{Path(sys.executable).parent}{os.pathsep}{os.environ['PATH']}"
    env = {**os.environ, "PATH": path}
    use_readme_driver(repo, env)
    repo.git("update-ref", "refs/remotes/origin/main", "HEAD")
    repo.git("checkout", "-q", "-b", "feature")
    own = repo.commit("this PR's entry", **{"perf-changelog.yaml": HISTORY + "\n" + SAME})
    repo.git("checkout", "-q", "main")
    repo.commit("another PR's entry", **{"perf-changelog.yaml": HISTORY + "\n" + SAME})
    repo.git("update-ref", "refs/remotes/origin/main", "HEAD")
    repo.git("checkout", "-q", "feature")
    merge = git_merge(repo, "main", env=env)
    assert merge.returncode == 0 and "CONFLICT" not in merge.stdout, merge.stdout
    assert repo.read().decode() == HISTORY + "\n" + SAME  # one entry: no conflict, no driver
    return own


def test_the_gate_names_the_branchs_entry_that_became_mains(repo: GitRepo) -> None:
    own = _identical_appends(repo)
    result = repo.infx("changelog", "check", "--repo", "acme/bench")
    assert result.exit_code == 1, result.output
    line = HISTORY.count("\n") + 2
    assert f"perf-changelog.yaml:{line}: merge: nothing is appended, but commit {own[:12]}" in (
        result.output
    )
    assert f"main holds byte for byte at line {line}" in result.output
    assert "append this change's own entry again" in result.output


def test_in_ci_too_where_the_base_is_main(repo: GitRepo) -> None:
    own = _identical_appends(repo)
    result = repo.infx(
        "changelog", "check", "--base", "main", "--head", "HEAD", "--pr", "5", "--format", "json"
    )
    assert result.exit_code == 1, result.output
    assert f"commit {own[:12]}" in result.stdout and '"rule": "merge"' in result.stdout


def test_a_branch_that_dropped_its_own_entry_is_not_told(repo: GitRepo) -> None:
    """Nothing appended because the branch took its entry back: main does not hold it."""
    repo.git("update-ref", "refs/remotes/origin/main", "HEAD")
    repo.git("checkout", "-q", "-b", "feature")
    repo.commit("entry", **{"perf-changelog.yaml": HISTORY + "\n" + SAME})
    repo.commit("taken back", **{"perf-changelog.yaml": HISTORY})
    result = repo.infx("changelog", "check", "--repo", "acme/bench")
    assert result.exit_code == 0 and "no change" in result.output, result.output
