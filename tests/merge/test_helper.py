"""`infx merge PR` end to end: a real origin repository and the local GitHub API."""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

import pytest
from click.testing import CliRunner

from infx.cli import cli
from tests.conftest import HISTORY, LINK, MASTER, GitRepo, entry, make_repo
from tests.github.scenario import open_pr

CHECKS = [
    {"name": "check-changelog", "status": "completed", "conclusion": "success"},
    {"name": "tests", "status": "completed", "conclusion": "success"},
]
# What the sweep workflow's reuse gate sets on the head the helper pushes.
READY = {"context": "infx/reuse", "state": "success", "description": "ready: run 500 measured"}
MAIN_ENTRY = entry(keys=["llama-fp8-mi355x-sglang"], link=f"{LINK}30", description="Main change")
PR_ENTRY = entry(description="PR change")


@pytest.fixture
def project(tmp_path: Path, api, monkeypatch):
    """origin (bare) with main and a PR branch that conflicts with main on the changelog."""
    seed = make_repo(tmp_path / "seed")
    origin = tmp_path / "origin.git"
    subprocess.run(["git", "clone", "-q", "--bare", str(seed.path), str(origin)], check=True)
    seed.git("remote", "set-url", "origin", str(origin))
    seed.git("checkout", "-q", "-b", "feature")
    pr_head = seed.commit("pr entry", **{"perf-changelog.yaml": HISTORY + "\n" + PR_ENTRY})
    seed.git("push", "-q", "origin", "feature")
    seed.git("checkout", "-q", "main")

    state = api.state
    state.workdir = tmp_path / "api-git"
    # The PR's sweep ran before main gained an entry of its own.
    green = open_pr(state, origin, pr_head, pr_head, labels=("full-sweep-enabled",), copy=False)
    green.record_run(500, pr_head, 5)
    seed.commit("main entry", **{"perf-changelog.yaml": HISTORY + "\n" + MAIN_ENTRY})
    seed.git("push", "-q", "origin", "main")
    state.token_user = ("maintainer", "MEMBER")
    state.permissions["maintainer"] = "write"
    state.default_checks = CHECKS
    state.default_statuses = [READY]
    monkeypatch.setenv("GITHUB_REPOSITORY", "acme/bench")
    return seed, origin, pr_head


def run_merge(repo: GitRepo, *args: str):
    old = Path.cwd()
    os.chdir(repo.path)
    try:
        return CliRunner().invoke(
            cli, ["merge", "7", "--poll-interval", "0", "--timeout", "5", *args]
        )
    finally:
        os.chdir(old)


def branch(origin: Path, name: str) -> str:
    return subprocess.run(
        ["git", "rev-parse", name], cwd=origin, capture_output=True, text=True
    ).stdout.strip()


def show(origin: Path, ref: str) -> str:
    return subprocess.run(
        ["git", "show", f"{ref}:perf-changelog.yaml"], cwd=origin, capture_output=True, text=True
    ).stdout


def test_merge_resolves_canonicalizes_asks_and_merges(project, api) -> None:
    repo, origin, pr_head = project
    result = run_merge(repo)
    assert result.exit_code == 0, result.output
    new_head = branch(origin, "feature")
    assert new_head != pr_head
    assert show(origin, "feature") == HISTORY + "\n" + MAIN_ENTRY + "\n" + entry(
        description="PR change", link=f"{LINK}7"
    )
    assert [c["body"] for c in api.state.comments] == ["/reuse-sweep-run"]
    assert api.state.merges == [{"number": 7, "merge_method": "squash", "sha": new_head}]
    assert "resolved the perf-changelog.yaml conflict" in result.output
    assert "posted /reuse-sweep-run" in result.output


def test_rerun_after_success_posts_nothing_twice(project, api) -> None:
    repo, origin, _ = project
    api.state.add_comment(7, "maintainer", "/reuse-sweep-run 500", 50)
    result = run_merge(repo, "--dry-run")
    assert result.exit_code == 0, result.output
    assert "pinned to run 500" in result.output and "not posting another" in result.output
    assert len(api.state.comments) == 1 and api.state.merges == []
    assert branch(origin, "feature") == project[2]


def test_failed_check_stops_the_merge(project, api) -> None:
    repo, _, _ = project
    api.state.default_checks = [
        *CHECKS[:1],
        {"name": "tests", "status": "completed", "conclusion": "failure"},
    ]
    result = run_merge(repo)
    assert result.exit_code == 1 and "checks failed" in result.output and api.state.merges == []


def test_the_helper_waits_for_the_reuse_status_and_stops_on_not_ready(project, api) -> None:
    repo, _, _ = project
    api.state.default_statuses = [
        {"context": "infx/reuse", "state": "failure", "description": "not ready: run 500 did not"}
    ]
    result = run_merge(repo)
    assert result.exit_code == 1 and api.state.merges == []
    assert "infx/reuse on" in result.output and "not ready: run 500 did not" in result.output
    api.state.default_statuses = []
    result = run_merge(repo)
    assert result.exit_code == 1 and "timed out" in result.output and "infx/reuse" in result.output


def test_nothing_is_posted_or_pushed_when_the_run_did_not_measure_what_merges(project, api) -> None:
    repo, origin, pr_head = project
    # Main retunes the PR's config after its sweep: the merge would measure something else.
    repo.commit(
        "retune", **{"configs__amd-master.yaml": MASTER.replace("conc-end: 32", "conc-end: 16")}
    )
    repo.git("push", "-q", "origin", "main")
    result = run_merge(repo)
    assert result.exit_code == 1, result.output
    assert "no reusable sweep: run 500 did not measure what merges" in result.output
    assert "conc-end: 32 -> 16" in result.output
    assert branch(origin, "feature") == pr_head
    assert api.state.comments == [] and api.state.merges == []


def test_preflight_refuses_two_full_sweep_labels(project, api) -> None:
    repo, origin, pr_head = project
    api.state.pulls[7]["labels"].append({"name": "full-sweep-fail-fast"})
    result = run_merge(repo)
    assert result.exit_code == 1 and "2 sweep labels" in result.output
    assert "it needs exactly one" in result.output
    assert branch(origin, "feature") == pr_head


def sweep_run(api) -> dict:
    """The PR's sweep run (the issuer's run of it is listed too)."""
    return next(r for r in api.state.runs if r["path"].endswith("/run-sweep.yml"))


def test_no_reusable_sweep_no_merge(project, api) -> None:
    repo, origin, pr_head = project
    sweep_run(api)["conclusion"] = "failure"
    result = run_merge(repo)
    assert result.exit_code == 1 and "no reusable sweep" in result.output
    assert branch(origin, "feature") == pr_head and api.state.comments == []


def test_merge_refuses_a_pr_that_edits_history(project, api) -> None:
    repo, origin, _ = project
    repo.git("checkout", "-q", "feature")
    edited = HISTORY.replace("Bring up", "Brought up") + "\n" + PR_ENTRY
    head = repo.commit("edit history", **{"perf-changelog.yaml": edited})
    repo.git("push", "-q", "origin", "feature")
    repo.git("checkout", "-q", "main")
    api.state.pulls[7]["head"]["sha"] = head
    api.state.pull_commits[7] = [head]
    sweep_run(api)["head_sha"] = head
    result = run_merge(repo)
    assert "no reusable sweep" not in result.output
    assert result.exit_code == 1
    assert "does more than append entries" in result.output
    assert branch(origin, "feature") == head and api.state.merges == []
    assert len(repo.git("worktree", "list").splitlines()) == 1


@pytest.mark.parametrize(
    "option", [("--poll-interval", "nan"), ("--poll-interval", "-1"), ("--timeout", "nan")]
)
def test_a_wait_that_is_no_number_of_seconds_is_a_usage_error(option: tuple[str, str]) -> None:
    """Refused before anything is read, pushed or posted: a NaN timeout never ran out, and a
    NaN or negative interval crashed sleep() after the branch was pushed (exit 3)."""
    from infx.cli import cli

    result = CliRunner().invoke(cli, ["merge", "7", *option])
    assert result.exit_code == 2, result.output
    assert option[0] in result.output and "Traceback" not in result.output
