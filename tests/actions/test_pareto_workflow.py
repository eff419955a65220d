"""pareto-coverage.yml: after a PR's sweep finished, its results table and plan (artifacts
of that run, read as data) give the check run infx/pareto-coverage on the PR's head; a
fork's run and main's runs are left alone."""

from __future__ import annotations

import json

import pytest

from infx.matrix.rows import empty_plan
from infx.results.ingest.process import document
from tests.actions.harness import World, load, simulate, triggered
from tests.github.fake_api import FakeGitHub
from tests.github.scenario import zip_files as zip_bytes
from tests.history.artifacts import zipped_table
from tests.results.formats import fixed_row
from tests.review.test_pareto import curve

WORKFLOW = load("pareto-coverage.yml")
HEAD, RUN = "a" * 40, 5150


def sweep_run(
    api: FakeGitHub, *, event: str = "pull_request", head_repo: str = "acme/bench"
) -> dict:
    run = api.state.add_run(RUN, head_sha=HEAD, minute=1, event=event, conclusion="failure",
                            artifacts=["results_bmk", "sweep-plan"], head_repo=head_repo)  # fmt: skip
    plan = empty_plan()
    plan["single_node"]["1k1k"] = [fixed_row(conc=c) for c in (1, 2, 4, 8, 16)]
    plan["single_node"]["1k1k"].append(fixed_row(precision="fp4"))  # measured nothing
    api.state.blobs[RUN * 100] = zipped_table(document(curve(5), None))
    api.state.blobs[RUN * 100 + 1] = zip_bytes({"sweep.json": json.dumps(plan).encode()})
    return {"action": "completed", "workflow_run": {**run, "name": "run-sweep"}}


def test_the_job_holds_only_what_it_needs() -> None:
    assert WORKFLOW["permissions"] == {}
    (job,) = WORKFLOW["jobs"].values()
    assert job["permissions"] == {"contents": "read", "actions": "read", "checks": "write"}
    assert "ref" not in job["steps"][0]["with"] and "secrets." not in str(WORKFLOW)
    assert all("${{" not in step.get("run", "") for step in job["steps"])


def test_a_pr_sweep_gets_its_check(world: World, api: FakeGitHub) -> None:
    payload = sweep_run(api)
    assert triggered(WORKFLOW, "workflow_run", payload, [])
    run = simulate(world, "pareto-coverage.yml", "workflow_run", payload)
    assert run.ran("coverage"), run.logs
    (check,) = api.state.check_runs[HEAD]
    assert check["name"] == "infx/pareto-coverage" and check["conclusion"] == "neutral"
    assert "fp4" in check["output"]["summary"] and "0/5" in check["output"]["summary"]


@pytest.mark.parametrize(
    ("event", "head_repo"), [("pull_request", "someone/bench"), ("push", "acme/bench")]
)
def test_forks_and_main_get_no_check(
    world: World, api: FakeGitHub, event: str, head_repo: str
) -> None:
    payload = sweep_run(api, event=event, head_repo=head_repo)
    run = simulate(world, "pareto-coverage.yml", "workflow_run", payload)
    assert run.jobs["coverage"] == "skipped" and HEAD not in api.state.check_runs
