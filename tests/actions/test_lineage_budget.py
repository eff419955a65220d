"""The budget holds a lineage, not one dispatch, with run-sweep.yml as GitHub runs it (the
harness, the fake API): a sweep within its budget and its reruns (the automatic infra
retry, a repeat, /rerun-failed), each within it alone, started unapproved however much the
lineage spent. A rerun is priced on what its lineage was priced at before it, plus its own
estimate; a PR's run wrote its own record, so GitHub's record of the lineage's GPU jobs is
the floor of that figure."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from tests.actions.gpu import pr_merge_ref, publish
from tests.actions.harness import Run, World, simulate
from tests.actions.test_sweep_authority import PRIMARY, budgeted, event, people, ran, sweep
from tests.github.fake_api import FakeGitHub, stamp

DISPATCH = {"ref": "refs/heads/feature", "repository": {"full_name": "acme/bench"},
            "inputs": {"rerun-of": "7100", "scope": "missing", "pr-number": 17}}  # fmt: skip


def first_sweep(api: FakeGitHub, tmp_path: Path, budget: float) -> tuple[World, Run, str]:
    """A maintainer's sweep of the Llama configs (22 GPU-hours), within `budget`: it ran."""
    repo = budgeted(tmp_path, budget)
    pr_merge_ref(repo.path)
    people(api)
    payload = event(repo, "labeled", [PRIMARY], PRIMARY, sender="maintainer")
    first = sweep(api, tmp_path, repo, payload, run_id=7100)
    ran(first)
    world = World(repo.path, tmp_path / "world", api.url, api.state.requests)
    return world, first, repo.head


def record(run: Run) -> dict[str, Any]:
    data: dict[str, Any] = json.loads((run.artifacts["sweep-plan"] / "rerun.json").read_bytes())
    return data


def gpu_jobs(run: Run, minutes: float) -> list[dict[str, Any]]:
    """The run's GPU jobs as GitHub lists them, each `minutes` long and failed."""
    return [
        {"id": 7100_000 + i, "run_id": 7100, "run_attempt": 1, "name": d.name,
         "status": "completed", "conclusion": "failure", "started_at": stamp(0),
         "completed_at": stamp(minutes), "runner_name": None, "labels": [d.runner],
         "steps": []}
        for i, d in enumerate(run.dispatches, 1)
    ]  # fmt: skip


def test_a_rerun_within_budget_alone_waits_when_its_lineage_is_over(
    api: FakeGitHub, tmp_path: Path
) -> None:
    """Budget 30: the sweep's 22 GPU-hours ran unapproved. Its rerun of every row, 22 more,
    was priced alone and started unapproved; the lineage then held 44 of 30."""
    world, first, head = first_sweep(api, tmp_path, 30.0)
    spent = record(first)["spent"]
    estimate = json.loads((first.artifacts["sweep-plan"] / "estimate.json").read_bytes())
    assert spent == estimate["gpu-hours"] and 10 < spent <= 30
    publish(api, world, first, 7100, head_sha=head, conclusion="failure", jobs=[])
    rerun = simulate(world, "run-sweep.yml", "workflow_dispatch", DISPATCH, run_id=7101)
    assert rerun.ran("setup"), rerun.log("setup")
    assert rerun.outputs["setup"]["over-budget"] == "true", rerun.log("setup")
    assert f"lineage was priced at {spent:,.1f} GPU-hours before this rerun" in rerun.log("setup")
    assert rerun.jobs["budget-approval"] == "waiting" and rerun.dispatches == []
    # Its own record carries the lineage on, for the next rerun.
    assert record(rerun)["spent"] > 2 * spent - 0.01


def test_a_rerun_within_budget_with_its_lineage_starts_unapproved(
    api: FakeGitHub, tmp_path: Path
) -> None:
    world, first, head = first_sweep(api, tmp_path, 1000.0)
    publish(api, world, first, 7100, head_sha=head, conclusion="failure", jobs=[])
    rerun = simulate(world, "run-sweep.yml", "workflow_dispatch", DISPATCH, run_id=7101)
    assert rerun.outputs["setup"]["over-budget"] == "false", rerun.log("setup")
    assert len(rerun.dispatches) == len(first.dispatches) > 0


def test_a_prs_record_that_says_its_lineage_spent_nothing_is_not_believed(
    api: FakeGitHub, tmp_path: Path
) -> None:
    """The PR's own code wrote its sweep's rerun.json (a pull_request run executes the PR's
    workflow and infx): `spent: 0`. GitHub's record of the jobs that ran says otherwise."""
    world, first, head = first_sweep(api, tmp_path, 30.0)
    path = first.artifacts["sweep-plan"] / "rerun.json"
    path.write_text(json.dumps({**record(first), "spent": 0}))
    # An hour on a node of 8 GPUs: 8 GPU-hours, whatever the record says.
    jobs = gpu_jobs(first, 60)
    publish(api, world, first, 7100, head_sha=head, conclusion="failure", jobs=jobs)
    rerun = simulate(world, "run-sweep.yml", "workflow_dispatch", DISPATCH, run_id=7101)
    assert rerun.outputs["setup"]["over-budget"] == "true", rerun.log("setup")
    assert rerun.jobs["budget-approval"] == "waiting" and rerun.dispatches == []
    assert record(rerun)["spent"] >= 8 * len(jobs)
