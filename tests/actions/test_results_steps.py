"""The results steps in the workflows: where they run, with which token, in which order."""

from __future__ import annotations

import pytest

from tests.actions.conftest import SweepRepo
from tests.actions.harness import World, load, pr_payload, push_payload, simulate

SWEEP = load("run-sweep.yml")
TEMPLATE = load("benchmark-tmpl.yml")


def step_names(job: dict) -> list[str]:
    return [s.get("name", s.get("uses", "")) for s in job["steps"]]


def test_each_benchmark_job_processes_its_output_after_the_recipe() -> None:
    names = step_names(TEMPLATE["jobs"]["benchmark"])
    assert names.index("Run the recipe") < names.index("Process the results")
    assert names.index("Process the results") < names.index("Upload results")
    steps = {s.get("name"): s for s in TEMPLATE["jobs"]["benchmark"]["steps"]}
    assert steps["Process the results"]["run"].strip() == "infx results process"
    assert "if" not in steps["Process the results"]  # a failed recipe fails the job first


def test_collect_builds_the_table_before_uploading_results_bmk() -> None:
    steps = SWEEP["jobs"]["collect"]["steps"]
    names = step_names(SWEEP["jobs"]["collect"])
    collect = names.index("Collect the results table")
    assert names.index("Download benchmark results") < collect
    assert names.index("Download eval results") < collect < names.index("Upload results_bmk")
    script = steps[collect]["run"]
    assert 'infx results collect "${roots[@]}" "${previous[@]}" --out-dir results_bmk' in script
    # collect refuses a missing folder: the step names only those downloaded
    assert "for root in results_bmk eval_results_all; do" in script


def test_compare_job_holds_only_what_it_needs() -> None:
    job = SWEEP["jobs"]["compare"]
    assert job["permissions"] == {
        "contents": "read",
        "actions": "read",
        "pull-requests": "write",
        "checks": "write",
    }
    (compare,) = [s for s in job["steps"] if "infx results compare" in s.get("run", "")]
    assert "${{" not in compare["run"]
    # A rerun of a PR's sweep (workflow_dispatch) compares for that PR and its head.
    assert compare["env"]["PR_NUMBER"] == (
        "${{ github.event.pull_request.number || inputs.pr-number }}"
    )
    assert compare["env"]["HEAD_SHA"] == "${{ github.event.pull_request.head.sha || github.sha }}"
    assert '--check-sha "$HEAD_SHA"' in compare["run"]
    install = next(s for s in job["steps"] if s.get("uses") == "./")
    assert install["with"]["extras"] == "compare"


def test_changes_job_runs_on_main_with_its_own_token() -> None:
    job = SWEEP["jobs"]["changes"]
    assert job["permissions"] == {"contents": "read", "actions": "read", "issues": "write"}
    (step,) = [s for s in job["steps"] if "infx results changes" in s.get("run", "")]
    assert "${{" not in step["run"] and "--current results_bmk/results.json" in step["run"]


@pytest.mark.parametrize(
    ("event", "action", "labels", "fork", "draft", "runs"),
    [
        ("pull_request", "labeled", ["full-sweep-fail-fast"], False, False, True),
        ("pull_request", "synchronize", ["full-sweep-enabled"], False, False, True),
        ("pull_request", "synchronize", ["full-sweep-enabled"], True, False, False),
        ("pull_request", "synchronize", ["full-sweep-enabled"], False, True, False),
        ("push", None, [], False, False, False),
    ],
)
def test_compare_runs_for_same_repository_pull_requests_only(
    world: World, sweep_repo: SweepRepo, event, action, labels, fork, draft, runs: bool
) -> None:
    if event == "push":
        payload = push_payload(before=sweep_repo.base, after=sweep_repo.merge)
    else:
        event_label = labels[0] if action == "labeled" else None
        payload = pr_payload(
            action,
            labels,
            event_label,
            draft=draft,
            fork=fork,
            head_sha=sweep_repo.head,
            base_sha=sweep_repo.base,
        )
    run = simulate(world, "run-sweep.yml", event, payload)
    assert run.ran("compare") is runs, run.logs
    assert run.ran("changes") is (event == "push"), run.logs
    if event == "push":
        assert run.ran("collect")


def test_compare_runs_after_a_partly_failed_sweep(world: World, sweep_repo: SweepRepo) -> None:
    payload = pr_payload(
        "synchronize", ["full-sweep-enabled"], head_sha=sweep_repo.head, base_sha=sweep_repo.base
    )
    run = simulate(world, "run-sweep.yml", "pull_request", payload, outcome={"single": "failure"})
    assert run.jobs["single"] == "failure" and run.ran("collect") and run.ran("compare")
