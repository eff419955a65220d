"""A PR's lineage is priced no lower than the GPU jobs GitHub recorded for it, and GitHub
records one runner for a multi-node job (its launcher; the cluster scheduler holds the
other nodes): each job counts the nodes the largest job of the plan holds on its runner
label, never one node for a job of six."""

from __future__ import annotations

from dataclasses import replace
from datetime import UTC, datetime, timedelta
from typing import Any

from infx.github.client import GitHub
from infx.github.values import Job
from infx.matrix.cost import estimate, verdict
from infx.rerun.reads import lineage_hours
from infx.rerun.rules import gpu_job_hours, lineage_before, plan_gpus
from tests.github.fake_api import FakeGitHub, stamp
from tests.matrix.test_cost import FIXED, MULTI
from tests.sweep.test_lineage_pricing import record

T0 = datetime(2026, 12, 1, tzinfo=UTC)
LABEL = "mi355x-disagg"
GPUS = {LABEL: 8, "mi355x": 8}
POOLS = {LABEL: ["mi355x-disagg_00", "mi355x-disagg_01"], "mi355x": ["mi355x-amds_00"]}
# Two prefill nodes and four decode nodes: 48 GPUs held for the job's whole run.
SIX = {
    **MULTI,
    "prefill": {**MULTI["prefill"], "additional-settings": ["PREFILL_NODES=2"]},
    "decode": {**MULTI["decode"], "additional-settings": ["DECODE_NODES=4"]},
}


def job(labels: tuple[str, ...], minutes: float = 60) -> Job:
    end = T0 + timedelta(minutes=minutes)
    return Job(1, 7100, 1, "multi/0/0 x", "completed", "failure", T0, end, None, labels, ())


def test_a_job_counts_the_gpus_its_plan_s_largest_job_holds_on_its_label() -> None:
    held = plan_gpus([(SIX, False), ({**FIXED, "runner": "mi355x"}, False)], GPUS, POOLS)
    assert held[LABEL] == held["mi355x-disagg_01"] == 48 and held["mi355x"] == 8
    assert gpu_job_hours([job((LABEL,))], GPUS) == 8  # one node: what the floor counted
    assert gpu_job_hours([job((LABEL,))], GPUS, held) == 48
    assert gpu_job_hours([job(("mi355x-disagg_00",))], GPUS, held) == 48  # pinned to a node
    assert gpu_job_hours([job(("mi355x",))], GPUS, held) == 8  # a single-node label
    # A label the plan does not use (the PR's code chose it): the plan's largest job.
    assert gpu_job_hours([job(("h100-elsewhere",), 30)], GPUS, held) == 24
    assert gpu_job_hours([job(("ubuntu-latest",))], GPUS, held) == 0


def test_a_self_hosted_runner_with_a_hosted_looking_label_counts() -> None:
    """A PR's workflow names the labels; a self-hosted GPU runner may carry `ubuntu-22.04`
    too. GitHub's runner group says whose machine ran the job: only GitHub's own is free."""
    held = plan_gpus([(SIX, False)], GPUS, POOLS)
    ours = replace(job(("ubuntu-22.04",)), runner_group="gpu")
    assert gpu_job_hours([ours], GPUS, held) == 48  # the plan's largest job
    hosted = replace(job(("ubuntu-22.04",)), runner_group="GitHub Actions")
    assert gpu_job_hours([hosted], GPUS, held) == 0


def _jobs(run_id: int, labels: list[str], count: int) -> list[dict[str, Any]]:
    return [
        {"id": run_id * 1000 + i, "run_id": run_id, "run_attempt": 1, "name": f"multi/0/{i} x",
         "status": "completed", "conclusion": "failure", "started_at": stamp(0),
         "completed_at": stamp(60), "runner_name": None, "labels": labels, "steps": []}
        for i in range(count)
    ]  # fmt: skip


def test_the_runner_group_github_names_is_read_for_each_job(api: FakeGitHub) -> None:
    api.state.add_run(7100, head_sha="a" * 40, minute=0, conclusion="failure")
    api.state.jobs[7100] = [
        {**_jobs(7100, ["ubuntu-latest"], 1)[0], "runner_group_name": "gpu-pool"},
        {**_jobs(7100, ["ubuntu-latest"], 2)[1], "runner_group_name": "GitHub Actions"},
    ]
    gh = GitHub("acme/bench", token="t", api_url=api.url, backoff=0)
    jobs = gh.decide(lambda: gh.jobs(7100))
    assert [j.runner_group for j in jobs] == ["gpu-pool", "GitHub Actions"]
    assert gpu_job_hours(jobs, GPUS, plan_gpus([(SIX, False)], GPUS, POOLS)) == 48


def test_a_lineage_of_multi_node_jobs_needs_approval_though_one_node_each_fit(
    api: FakeGitHub,
) -> None:
    """The PR's sweep ran two six-node jobs for an hour and its rerun one more; the PR's
    own code wrote `spent: 0` in its record. The floor read as one node a job: 24 GPU-hours,
    and a rerun of 36 started within a budget of 100. The jobs held 144."""
    api.state.add_run(7100, head_sha="a" * 40, minute=0, conclusion="failure")
    api.state.add_run(7101, head_sha="a" * 40, minute=90, conclusion="failure",
                      event="workflow_dispatch")  # fmt: skip
    api.state.jobs[7100] = _jobs(7100, [LABEL], 2)
    api.state.jobs[7101] = _jobs(7101, ["mi355x-disagg_01"], 1)
    gh = GitHub("acme/bench", token="t", api_url=api.url, backoff=0)
    held = plan_gpus([(SIX, False)], GPUS, POOLS)
    source, branch = gh.decide(lambda: (gh.run(7101), gh.branch_runs("run-sweep.yml", "feature")))
    spent = gh.decide(lambda: lineage_hours(gh, source, branch, GPUS, held))
    assert spent == 3 * 48
    costs = estimate([(SIX, False)], {}, False, GPUS)  # three points, 45 minutes, 48 GPUs
    before = lineage_before(record(spent=0.0), spent)
    budget = verdict(costs, "full-sweep-enabled", {"full-sweep-enabled": 100.0})
    assert budget.gpu_hours == 36.0
    assert replace(budget, before=before).over
    assert not replace(budget, before=lineage_before(record(spent=0.0), 24.0)).over
