"""sweep-receipt.yml's `ingest` job: once the issuer sealed a push to main, its results go
into main's history (PostgreSQL through the INFX_HISTORY_URL secret, else an SQLite file in
the Actions cache) beside the issuer's receipts, with a read-only token, never for a pull
request's run; run-sweep.yml writes no history at all."""

from __future__ import annotations

import itertools
from pathlib import Path

import pytest

from infx.history import open_history
from tests.actions.conftest import SweepRepo
from tests.actions.expressions import Status, condition
from tests.actions.harness import World, load, pr_payload, push_payload, simulate
from tests.actions.issuer import issuer_run, stored_history
from tests.history.postgres import create_database
from tests.results.ingest.test_collect import sweep

SWEEP = load("run-sweep.yml")
JOB = load("sweep-receipt.yml")["jobs"]["ingest"]
STEPS = {s.get("name", s.get("uses")): s for s in JOB["steps"]}
_names = itertools.count()


def test_ingest_holds_only_what_it_needs() -> None:
    assert JOB["permissions"] == {"contents": "read", "actions": "read"}
    for step in JOB["steps"]:
        assert "${{" not in step.get("run", "")
        if "secrets." in str(step):
            assert set(step) >= {"run", "env"}, step  # secrets reach infx only, via env
    assert STEPS["Store the run"]["run"] == 'infx results ingest results_bmk --run "$RUN_ID"'
    assert "--fetch" in STEPS["Store the receipts"]["run"]  # checked against the issuer
    restore, save = STEPS["Restore the history"], STEPS["Save the history"]
    assert restore["uses"].startswith("actions/cache/restore@5a3ec84e")
    assert save["uses"].startswith("actions/cache/save@5a3ec84e")
    assert restore["with"]["path"] == save["with"]["path"] == ".infx/history.sqlite"
    assert restore["with"]["key"] == save["with"]["key"]
    assert "github.run_attempt" in save["with"]["key"]  # a re-run saves a cache of its own
    assert save["with"]["key"].startswith(restore["with"]["restore-keys"])
    names = list(STEPS)
    assert names.index("Check the receipts") < names.index("Store the run")
    assert "--check" in STEPS["Check the receipts"]["run"]
    assert STEPS["Store the run"]["if"] == "steps.check.outcome == 'success'"
    assert names.index("Restore the history") < names.index("Store the run")
    assert names.index("Store the run") < names.index("Store the receipts")
    assert names.index("Store the receipts") < names.index("Fill in main's recent runs")
    assert names.index("Fill in main's recent runs") < names.index("Save the history")
    assert "ingest" not in SWEEP["jobs"]  # the sweep's own jobs never write the history


@pytest.mark.parametrize(
    ("outputs", "stores"),
    [
        ({"event": "push", "branch": "main", "conclusion": "success"}, True),
        ({"event": "push", "branch": "main", "conclusion": "failure"}, False),
        ({"event": "push", "branch": "main", "conclusion": "cancelled"}, False),
        ({"event": "push", "branch": "feature", "conclusion": "success"}, False),
        ({"event": "pull_request", "branch": "feature", "conclusion": "success"}, False),
        ({"event": "workflow_dispatch", "branch": "main", "conclusion": "success"}, False),
        ({"event": "", "branch": "", "conclusion": ""}, False),  # the issuer failed
    ],
)
def test_when_a_run_is_stored(outputs: dict, stores: bool) -> None:
    ctx = {
        "github": {"event": {"repository": {"default_branch": "main"}}},
        "needs": {"issue": {"result": "success", "outputs": outputs}},
    }
    assert condition(JOB["if"], ctx, Status()) is stores


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
    assert not any(".infx/history" in log for log in run.logs.values())
    assert not list(world.tmp.glob("run-*/job-*/workspace/.infx/history.sqlite"))


def benchmarks(world: World) -> dict[str, Path]:
    """What the GPU jobs of a sweep upload: one folder per job with its infx-result.json."""
    bmk, evals = sweep(world.tmp / "gpu")
    return {p.name: p for root in (bmk, evals) for p in sorted(root.iterdir())}


def push(world: World, api, sweep_repo: SweepRepo):
    """Main's sweep of the merge (run 4242), then the issuer's run for it."""
    api.state.runs[:] = [r for r in api.state.runs if r["id"] != 4242]
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
    sweep_run = simulate(world, "run-sweep.yml", "push", payload, artifacts=benchmarks(world))
    assert sweep_run.ran("collect"), sweep_run.logs
    return issuer_run(api, world, 4242)


def test_a_main_sweep_goes_into_the_sqlite_history(world: World, api, sweep_repo) -> None:
    run = push(world, api, sweep_repo)
    assert run.ran("issue") and run.ran("ingest"), run.logs
    log = run.log("ingest")
    assert "run 4242 attempt 1" in log and "4 point(s): 4 added" in log, log
    with open_history(f"sqlite:///{stored_history(world)}") as history:
        (doc,) = history.main_runs()
    assert doc["run"]["id"] == 4242 and doc["run"]["sha"] == sweep_repo.merge
    assert len(doc["rows"]) == 4
    assert run.writes["ingest"] == []  # nothing written through the API
    assert "run receipt of run 4242 stored for run 4242" in log, log


def test_with_the_secret_the_history_is_postgresql(
    world: World, api, sweep_repo, postgres: str
) -> None:
    url = create_database(postgres, f"w{next(_names)}")
    world.secrets["INFX_HISTORY_URL"] = url
    first = push(world, api, sweep_repo)
    assert first.ran("ingest"), first.logs
    assert not list(world.tmp.glob("run-*/job-*/workspace/.infx/history.sqlite"))
    again = push(world, api, sweep_repo)  # the run re-run: the same rows again
    assert "0 added, 0 replaced, 4 unchanged" in again.log("ingest"), again.log("ingest")
    with open_history(url) as history:
        (doc,) = history.main_runs()
    assert doc["run"]["id"] == 4242 and len(doc["rows"]) == 4


def test_a_reused_sweep_goes_in_as_the_main_run(api, tmp_path: Path) -> None:
    """A push that reuses a PR's sweep republishes that run's table; once the issuer sealed
    the push, its ingest stores the table as this main run (GitHub's facts for run 4242),
    naming the run that measured it."""
    from tests.actions.test_provenance_chain import reused_merge

    pr, stored, _ = reused_merge(api, tmp_path)
    with open_history(f"sqlite:///{stored}") as history:
        (doc,) = history.main_runs()
    assert doc["run"]["id"] == 4242 and doc["run"]["sha"] == pr.merged
    assert doc["run"]["reused_from"] is not None and len(doc["rows"]) == 3


def test_a_history_that_refuses_the_run_warns_and_leaves_main_green(
    world: World, api, sweep_repo
) -> None:
    """An unreachable database must not turn main's sweep red (later baselines search
    successful runs only): the job stays green and says what it missed."""
    world.secrets["INFX_HISTORY_URL"] = "postgresql://infx:secret@127.0.0.1:9/history"
    run = push(world, api, sweep_repo)
    assert run.jobs["ingest"] == "success", run.logs
    log = run.log("ingest")
    assert "::warning title=results history::the run's results were not stored" in log
    assert "secret" not in log  # the password never reaches the log
