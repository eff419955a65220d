"""A person at a stopped merge of the changelog: what `check`, `fix`, `resolve-conflict` and
the merge driver say there, and that the way out they name works."""

from __future__ import annotations

import subprocess

from tests.changelog.test_merge import MAIN_ENTRY, PR_ENTRY, branches, use_driver
from tests.conftest import HISTORY, LINK, GitRepo, entry

CRLF_ENTRY = PR_ENTRY.replace("\n", "\r\n")


def _stopped_merge(repo: GitRepo, pr_side: str, *config: str) -> None:
    """main and the PR both appended; the PR branch merges main and stops on the conflict."""
    repo.git("update-ref", "refs/remotes/origin/main", "HEAD")
    branches(repo, pr_side, HISTORY + "\n" + MAIN_ENTRY)
    repo.git("update-ref", "refs/remotes/origin/main", "main")
    repo.git(*config, "merge", "main", check=False)
    assert "perf-changelog.yaml" in repo.git("diff", "--name-only", "--diff-filter=U")


def _marker_lines(text: str) -> list[int]:
    starts = ("<<<<<<<", "|||||||", "=======", ">>>>>>>")
    return [n for n, line in enumerate(text.splitlines(), 1) if line.startswith(starts)]


def test_check_names_diff3_markers_and_nothing_else(repo: GitRepo) -> None:
    """Both sides' entries are still in the file, between markers: no entry is dropped yet,
    and the `|||||||` line is a marker, not YAML."""
    _stopped_merge(repo, HISTORY + "\n" + PR_ENTRY, "-c", "merge.conflictStyle=diff3")
    text = repo.read().decode()
    lines = _marker_lines(text)
    assert len(lines) == 4 and "\n|||||||" in text
    result = repo.infx("changelog", "check", "--repo", "acme/bench")
    assert result.exit_code == 1, result.output
    problems = [line for line in result.output.splitlines() if ": conflict-marker: " in line]
    (problem,) = problems
    assert problem.startswith(f"perf-changelog.yaml:{lines[0]}: conflict-marker: ")
    assert "unresolved merge conflict" in problem
    for line in lines:
        assert f"at line {line}" in problem
    assert "infx changelog resolve-conflict" in problem
    for noise in ("drops", "invalid YAML", "entry-start", "history changed", "separator"):
        assert noise not in result.output
    assert "1 problem(s) found" in result.output


def test_markers_committed_outside_a_merge_are_named_with_their_lines(repo: GitRepo) -> None:
    conflicted = "<<<<<<< HEAD\n" + PR_ENTRY + "=======\n" + MAIN_ENTRY + ">>>>>>> main\n"
    repo.commit("markers", **{"perf-changelog.yaml": HISTORY + "\n" + conflicted})
    result = repo.infx("changelog", "check", "--base", "base", "--head", "HEAD", "--pr", "7")
    assert result.exit_code == 1, result.output
    first = HISTORY.count("\n") + 2
    lines = [first, first + PR_ENTRY.count("\n") + 1, first + conflicted.count("\n") - 1]
    assert f"perf-changelog.yaml:{first}: conflict-marker: unresolved merge conflict" in (
        result.output
    )
    assert all(f"at line {line}" in result.output for line in lines)
    assert "delete the marker lines" in result.output
    assert "invalid YAML" not in result.output and "entry-start" not in result.output


def test_lint_and_plan_say_what_check_says_of_committed_diff3_markers(repo: GitRepo) -> None:
    """`lint` and `sweep plan` used to send a committed conflict to `resolve-conflict`
    (which needs a stopped merge) and read the `|||||||` line as broken YAML."""
    conflicted = (
        "<<<<<<< HEAD\n" + PR_ENTRY + "||||||| base\n=======\n" + MAIN_ENTRY + ">>>>>>> main\n"
    )
    repo.commit("markers", **{"perf-changelog.yaml": HISTORY + "\n" + conflicted})
    first = HISTORY.count("\n") + 2
    linted = repo.infx("changelog", "lint")
    planned = repo.infx("sweep", "plan", "--base", "base", "--head", "HEAD")
    for result in (linted, planned):
        assert result.exit_code == 1, result.output
        assert "unresolved merge conflict" in result.output
        assert all(f"at line {n}" in result.output for n in _marker_lines(repo.read().decode()))
        assert "delete the marker lines" in result.output
        for noise in ("resolve-conflict", "invalid YAML", "entry-start", "history was edited"):
            assert noise not in result.output
    assert linted.output.startswith(f"perf-changelog.yaml:{first}: conflict-marker: ")
    assert "1 problem(s) found" in linted.output


def test_lint_mid_merge_sends_to_resolve_conflict(repo: GitRepo) -> None:
    _stopped_merge(repo, HISTORY + "\n" + PR_ENTRY, "-c", "merge.conflictStyle=diff3")
    result = repo.infx("changelog", "lint")
    assert result.exit_code == 1 and "infx changelog resolve-conflict" in result.output
    assert "invalid YAML" not in result.output and "1 problem(s) found" in result.output


def test_resolve_conflict_advises_what_works_mid_merge_and_it_does(repo: GitRepo) -> None:
    """The PR side was saved with CRLF: `fix` repairs that on the branch, not mid-merge, so
    the refusal says to abort first; doing what it says ends in a clean resolution."""
    _stopped_merge(repo, HISTORY + "\n" + CRLF_ENTRY)
    refused = repo.infx("changelog", "resolve-conflict", "--pr", "31")
    assert refused.exit_code == 1
    assert "run `git merge --abort`, then `infx changelog fix`, commit, and merge again" in (
        refused.output
    )
    repo.git("merge", "--abort")
    fixed = repo.infx("changelog", "fix")
    assert fixed.exit_code == 0, fixed.output
    repo.git("commit", "-q", "-am", "fix the changelog")
    repo.git("merge", "main", check=False)
    resolved = repo.infx("changelog", "resolve-conflict", "--pr", "31")
    assert resolved.exit_code == 0, resolved.output
    expected = HISTORY + "\n" + MAIN_ENTRY + "\n" + entry(description="PR change", link=f"{LINK}31")
    assert repo.read().decode() == expected


def test_a_refusal_fix_cannot_cure_does_not_send_anyone_to_fix(repo: GitRepo) -> None:
    _stopped_merge(repo, HISTORY + "  all-evals: true\n")
    refused = repo.infx("changelog", "resolve-conflict", "--pr", "31")
    assert refused.exit_code == 1 and "not its base plus whole new entries" in refused.output
    assert "infx changelog fix" not in refused.output


def test_fix_refuses_a_conflicted_file_and_says_how_out(repo: GitRepo) -> None:
    _stopped_merge(repo, HISTORY + "\n" + CRLF_ENTRY)
    before = repo.read()
    result = repo.infx("changelog", "fix")
    assert result.exit_code == 2, result.output
    assert "holds unresolved conflict markers" in result.output
    assert "`git merge --abort`, then `infx changelog fix`" in result.output
    assert "does more than append" not in result.output
    assert repo.read() == before


def test_the_driver_says_the_same_in_a_merge_and_in_a_rebase(repo: GitRepo) -> None:
    use_driver(repo, "--pr", "31")
    branches(repo, HISTORY + "\n" + CRLF_ENTRY, HISTORY + "\n" + MAIN_ENTRY)
    merge = subprocess.run(
        ["git", "merge", "--no-edit", "main"], cwd=repo.path, capture_output=True, text=True
    )
    assert merge.returncode != 0
    assert "run `git merge --abort`, then `infx changelog fix`" in merge.stderr
    repo.git("merge", "--abort")
    rebase = subprocess.run(
        ["git", "rebase", "main"], cwd=repo.path, capture_output=True, text=True
    )
    assert rebase.returncode != 0
    assert "run `git rebase --abort`, then `infx changelog fix`" in rebase.stderr
    repo.git("rebase", "--abort")
