"""The results steps in the workflows: where they run, with which token, in which order."""

from __future__ import annotations

import pytest

from tests.workflows.harness import load, pr_payload, push_payload, simulate
from tests.workflows.test_run_sweep_gating import PLAN

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
    assert "infx results collect results_bmk eval_results_all --out-dir results_bmk" in script


def test_compare_job_holds_only_what_it_needs() -> None:
    job = SWEEP["jobs"]["compare"]
    assert job["permissions"] == {
        "contents": "read",
        "actions": "read",
        "pull-requests": "write",
    }
    (compare,) = [s for s in job["steps"] if "infx results compare" in s.get("run", "")]
    assert "${{" not in compare["run"]
    assert compare["env"]["PR_NUMBER"] == "${{ github.event.pull_request.number }}"


@pytest.mark.parametrize(
    ("event", "payload", "runs"),
    [
        (
            "pull_request",
            pr_payload("labeled", ["full-sweep-fail-fast"], "full-sweep-fail-fast"),
            True,
        ),
        ("pull_request", pr_payload("synchronize", ["full-sweep-enabled"]), True),
        ("pull_request", pr_payload("synchronize", ["full-sweep-enabled"], fork=True), False),
        ("pull_request", pr_payload("synchronize", ["full-sweep-enabled"], draft=True), False),
        ("push", push_payload(), False),
    ],
)
def test_compare_runs_for_same_repository_pull_requests_only(
    tmp_path, event: str, payload: dict, runs: bool
) -> None:
    run = simulate(SWEEP, event, payload, tmp_path, PLAN)
    assert run.ran("compare") is runs
    if event == "push":
        assert run.ran("collect")


def test_compare_runs_after_a_partly_failed_sweep(tmp_path) -> None:
    payload = pr_payload("synchronize", ["full-sweep-enabled"])
    run = simulate(SWEEP, "pull_request", payload, tmp_path, PLAN, outcome={"single": "failure"})
    assert run.jobs["single"] == "failure" and run.ran("collect") and run.ran("compare")
