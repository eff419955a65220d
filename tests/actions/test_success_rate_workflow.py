"""success-rate.yml: on its schedule it reads main's sweep runs and their jobs with a
read-only token and publishes the rates as the `success-rate` artifact."""

from __future__ import annotations

import json

from tests.actions.harness import World, load, simulate, triggered
from tests.github.fake_api import FakeGitHub
from tests.review.test_success import job

WORKFLOW = load("success-rate.yml")


def test_the_job_reads_and_writes_nothing_else() -> None:
    assert WORKFLOW["permissions"] == {}
    (rate,) = WORKFLOW["jobs"].values()
    assert rate["permissions"] == {"contents": "read", "actions": "read"}
    assert all("${{" not in step.get("run", "") for step in rate["steps"])


def test_a_scheduled_run_publishes_the_rates(world: World, api: FakeGitHub) -> None:
    api.state.add_run(1, head_sha="1" * 40, minute=1, branch="main", event="push")
    api.state.jobs[1] = [
        job(["mi355x"], "success", run_id=1),
        job(["mi355x"], "failure", run_id=1, name="b"),
    ]
    payload = {"schedule": "17 6 * * 1"}
    assert triggered(WORKFLOW, "schedule", payload, [])
    run = simulate(world, "success-rate.yml", "schedule", payload)
    assert run.ran("rate"), run.logs
    found = json.loads((run.artifacts["success-rate"] / "success-rate.json").read_text())
    assert found["hardware"]["mi355x"]["attempts"] == 2
    assert "| mi355x | 1 | 2 | 50.0% | 1 |" in run.summaries["rate"]
    assert run.writes["rate"] == []
