"""run-sweep.yml's `ingest` job: a push to main stores its results in main's history
(PostgreSQL through the INFX_HISTORY_URL secret, else an SQLite file in the Actions cache),
with a read-only token, never on pull requests."""

from __future__ import annotations

import itertools
import json
from pathlib import Path

import pytest

from infx.history import open_history
from tests.actions.conftest import SweepRepo
from tests.actions.expressions import Status, condition
from tests.actions.harness import World, load, pr_payload, push_payload, simulate
from tests.history.postgres import create_database
from tests.results.ingest.test_collect import sweep

SWEEP = load("run-sweep.yml")
JOB = SWEEP["jobs"]["ingest"]
STEPS = {s.get("name", s.get("uses")): s for s in JOB["steps"]}
_names = itertools.count()


def test_ingest_holds_only_what_it_needs() -> None:
    assert JOB["permissions"] == {"contents": "read", "actions": "read"}
    for step in JOB["steps"]:
        assert "${{" not in step.get("run", "")
        if "secrets." in str(step):
            assert set(step) >= {"run", "env"}, step  # secrets reach infx only, via env
    assert (
        STEPS["Store this run"]["run"] == 'infx results ingest results_bmk --run "$GITHUB_RUN_ID"'
    )
    restore, save = STEPS["Restore the history"], STEPS["Save the history"]
    assert restore["uses"].startswith("actions/cache/restore@5a3ec84e")
    assert save["uses"].startswith("actions/cache/save@5a3ec84e")
    assert restore["with"]["path"] == save["with"]["path"] == ".infx/history.sqlite"
    assert restore["with"]["key"] == save["with"]["key"]
    assert "github.run_attempt" in save["with"]["key"]  # a re-run saves a cache of its own
    assert save["with"]["key"].startswith(restore["with"]["restore-keys"])
    names = list(STEPS)
    assert names.index("Restore the history") < names.index("Fill in main's recent runs")
    assert names.index("Fill in main's recent runs") < names.index("Store this run")
    assert names.index("Store this run") < names.index("Save the history")


@pytest.mark.parametrize(
    ("event", "results", "status", "stores"),
    [
        ("push", {"collect": "success"}, Status(), True),
        ("push", {"republish": "success", "collect": "skipped"}, Status(), True),
        ("push", {"collect": "success", "single": "failure"}, Status(), False),
        ("push", {"collect": "success", "evals": "cancelled"}, Status(), False),
        ("push", {"collect": "failure"}, Status(), False),
        ("push", {"collect": "skipped"}, Status(), False),
        ("push", {"collect": "success"}, Status(cancelled=True), False),
        ("pull_request", {"collect": "success"}, Status(), False),
    ],
)
def test_when_a_run_is_stored(event: str, results: dict, status: Status, stores: bool) -> None:
    needs = {name: {"result": "skipped", "outputs": {}} for name in JOB["needs"]}
    needs.update({name: {"result": r, "outputs": {}} for name, r in results.items()})
    ctx = {"github": {"event_name": event}, "needs": needs}
    assert condition(JOB["if"], ctx, status) is stores


@pytest.mark.parametrize(
    ("action", "fork"), [("synchronize", False), ("labeled", False), ("synchronize", True)]
)
def test_pull_requests_never_store(world: World, sweep_repo: SweepRepo, action, fork) -> None:
    payload = pr_payload(
        action,
        ["full-sweep-enabled"],
        "full-sweep-enabled" if action == "labeled" else None,
        fork=fork,
        head_sha=sweep_repo.head,
        base_sha=sweep_repo.base,
    )
    run = simulate(world, "run-sweep.yml", "pull_request", payload, artifacts=benchmarks(world))
    assert run.jobs["ingest"] == "skipped"


def benchmarks(world: World) -> dict[str, Path]:
    """What the GPU jobs of a sweep upload: one folder per job with its infx-result.json."""
    bmk, evals = sweep(world.tmp / "gpu")
    return {p.name: p for root in (bmk, evals) for p in sorted(root.iterdir())}


def push(world: World, api, sweep_repo: SweepRepo):
    api.state.add_run(
        4242,
        head_sha=sweep_repo.merge,
        minute=60,
        branch="main",
        event="push",
        status="in_progress",
        conclusion=None,
        artifacts=[],
    )
    payload = push_payload(before=sweep_repo.base, after=sweep_repo.merge)
    return simulate(world, "run-sweep.yml", "push", payload, artifacts=benchmarks(world))


def test_a_main_sweep_goes_into_the_sqlite_history(world: World, api, sweep_repo) -> None:
    run = push(world, api, sweep_repo)
    assert run.ran("collect") and run.ran("ingest"), run.logs
    log = run.log("ingest")
    assert "run 4242 attempt 1" in log and "4 point(s): 4 added" in log, log
    (stored,) = world.tmp.glob("run-*/job-*/workspace/.infx/history.sqlite")
    with open_history(f"sqlite:///{stored}") as history:
        (doc,) = history.main_runs()
    assert doc["run"]["id"] == 4242 and doc["run"]["sha"] == sweep_repo.merge
    assert len(doc["rows"]) == 4
    assert run.writes["ingest"] == []  # nothing written through the API
    assert "without the receipts" not in log, log  # collect sealed them; ingest kept them


def test_with_the_secret_the_history_is_postgresql(
    world: World, api, sweep_repo, postgres: str
) -> None:
    url = create_database(postgres, f"w{next(_names)}")
    world.secrets["INFX_HISTORY_URL"] = url
    first = push(world, api, sweep_repo)
    assert first.ran("ingest"), first.logs
    assert not list(world.tmp.glob("run-*/job-*/workspace/.infx/history.sqlite"))
    api.state.runs.clear()
    again = push(world, api, sweep_repo)  # the run re-run: the same rows again
    assert "0 added, 0 replaced, 4 unchanged" in again.log("ingest"), again.log("ingest")
    with open_history(url) as history:
        (doc,) = history.main_runs()
    assert doc["run"]["id"] == 4242 and len(doc["rows"]) == 4


def test_a_reused_sweep_goes_in_as_the_main_run(api, tmp_path: Path) -> None:
    """A push that reuses a PR's sweep republishes that run's table; the ingest stores it as
    this main run (GitHub's facts for run 4242), naming the run that measured it."""
    from tests.github.scenario import RUN, green_pr, seal
    from tests.history.artifacts import zipped_table
    from tests.history.tables import curve, table

    pr = green_pr(api.state)
    (bmk,) = [a for a in api.state.artifacts[RUN] if a["name"] == "results_bmk"]
    api.state.blobs[bmk["id"]] = zipped_table(
        table(RUN, curve(1000), ref="refs/pull/7/merge", sha="d" * 40)
    )
    seal(api.state, RUN, json.dumps(pr.manifests[RUN]).encode(), "d" * 40)  # its receipt
    merged = pr.merge()
    api.state.add_run(
        4242,
        head_sha=merged,
        minute=900,
        branch="main",
        event="push",
        status="in_progress",
        conclusion=None,
        artifacts=[],
    )
    world = World(pr.runner.path, tmp_path, api.url, api.state.requests)
    run = simulate(world, "run-sweep.yml", "push", push_payload(pr.before, merged))
    assert run.ran("republish") and run.ran("ingest"), run.logs
    (stored,) = tmp_path.glob("run-*/job-*/workspace/.infx/history.sqlite")
    with open_history(f"sqlite:///{stored}") as history:
        (doc,) = history.main_runs()
    assert doc["run"]["id"] == 4242 and doc["run"]["sha"] == merged
    assert doc["run"]["reused_from"] == RUN and len(doc["rows"]) == 3


def test_a_history_that_refuses_the_run_warns_and_leaves_main_green(
    world: World, api, sweep_repo
) -> None:
    """An unreachable database must not turn main's sweep red (later baselines search
    successful runs only): the job stays green and says what it missed."""
    world.secrets["INFX_HISTORY_URL"] = "postgresql://infx:secret@127.0.0.1:9/history"
    run = push(world, api, sweep_repo)
    assert run.ran("collect") and run.jobs["ingest"] == "success", run.logs
    log = run.log("ingest")
    assert "::warning title=results history::this run's results were not stored" in log
    assert "secret" not in log  # the password never reaches the log
