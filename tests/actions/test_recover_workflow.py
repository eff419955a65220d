"""recover-ingest.yml: a maintainer dispatches it with a main run; it stores that run's
results and receipts in the history from the run's artifacts, on a hosted runner with a
read-only token. Nothing in it can start a GPU job."""

from __future__ import annotations

from infx.history import open_history
from tests.actions.harness import WORKFLOWS, World, load, simulate
from tests.github.fake_api import FakeGitHub
from tests.review.test_recover import RUN, SHA, main_run

WORKFLOW = load("recover-ingest.yml")


def test_only_a_hosted_read_only_job() -> None:
    assert list(WORKFLOW["on"]) == ["workflow_dispatch"] and WORKFLOW["permissions"] == {}
    (job,) = WORKFLOW["jobs"].values()
    assert job["runs-on"] == "ubuntu-latest" and "strategy" not in job and "uses" not in job
    assert job["permissions"] == {"contents": "read", "actions": "read"}
    assert all("${{" not in step.get("run", "") for step in job["steps"])
    text = (WORKFLOWS / "recover-ingest.yml").read_text()
    assert "benchmark-tmpl" not in text and "workflow_call" not in text


def test_a_dispatch_recovers_the_run(world: World, api: FakeGitHub) -> None:
    main_run(api)
    payload = {"inputs": {"run": f"https://github.com/acme/bench/actions/runs/{RUN}"}}
    run = simulate(world, "recover-ingest.yml", "workflow_dispatch", payload, run_id=9001)
    assert run.ran("recover"), run.logs
    (stored,) = world.tmp.glob("run-*/job-*/workspace/.infx/history.sqlite")
    with open_history(f"sqlite:///{stored}") as history:
        (doc,) = history.main_runs()
    assert doc["run"]["id"] == RUN and doc["run"]["sha"] == SHA
    assert run.writes["recover"] == [] and run.dispatches == []
