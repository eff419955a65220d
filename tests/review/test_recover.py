"""`infx results recover`: a main run's missing ingest from its own artifacts, tried as bad
luck and an attacker would: a run that is not main's push, one still running, a failed GPU
job, a table its receipt does not seal, one of another run, an expired artifact."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from infx.history import open_history
from infx.history.receipts import stored_run
from tests.conftest import GitRepo
from tests.github.fake_api import FakeGitHub
from tests.github.scenario import seal
from tests.history.artifacts import zipped_table
from tests.history.tables import curve, table
from tests.review.test_success import job

RUN, SHA = 4242, "d" * 40


def main_run(api: FakeGitHub, **run: object) -> None:
    """Run 4242: a push to main whose GPU jobs passed and whose ingest job failed."""
    facts = {"branch": "main", "event": "push", "conclusion": "failure"} | run
    api.state.add_run(RUN, head_sha=SHA, minute=60, artifacts=["results_bmk", "sweep-receipt"],
                      **facts)  # type: ignore[arg-type]  # fmt: skip
    api.state.blobs[RUN * 100] = zipped_table(table(RUN, curve(1000), sha=SHA))
    seal(api.state, RUN, None, SHA)
    api.state.jobs[RUN] = [
        job(["mi355x"], "success", run_id=RUN),
        job(["mi355x"], "success", run_id=RUN, name="single/0/1 y"),
        job(["ubuntu-latest"], "failure", run_id=RUN, name="store results in the history"),
    ]


def recover(repo: GitRepo, db: Path, *args: str):
    return repo.infx("results", "recover", *args, "--history", str(db))


def stored(db: Path) -> list[dict]:
    with open_history(f"sqlite:///{db}") as history:
        return history.main_runs()


def test_a_failed_ingest_is_recovered_once(repo: GitRepo, api: FakeGitHub, tmp_path: Path) -> None:
    main_run(api)
    db = tmp_path / "history.sqlite"
    done = recover(repo, db, f"https://github.com/acme/bench/actions/runs/{RUN}/job/1")
    assert done.exit_code == 0, done.output
    (doc,) = stored(db)
    assert doc["run"]["id"] == RUN and doc["run"]["sha"] == SHA and len(doc["rows"]) == 3
    found = stored_run(f"sqlite:///{db}", RUN)
    assert found is not None and set(found.receipts) == {"run"}
    again = recover(repo, db, str(RUN))
    assert again.exit_code == 0 and "with its receipts already" in again.output
    assert api.state.count("POST") == 0  # nothing is dispatched, no GPU runs again


def test_a_run_stored_without_receipts_gets_them(
    repo: GitRepo, api: FakeGitHub, tmp_path: Path
) -> None:
    main_run(api)
    db = tmp_path / "history.sqlite"
    with open_history(f"sqlite:///{db}") as history:
        history.ingest(table(RUN, curve(1000), sha=SHA))
    done = recover(repo, db, str(RUN))
    assert done.exit_code == 0, done.output
    assert "run receipt of run 4242 stored for run 4242" in done.output
    assert "point(s)" not in done.output  # the rows were there already


@pytest.mark.parametrize(
    ("run", "why"),
    [
        ({"event": "pull_request", "branch": "feature"}, "only pushes to main"),
        ({"branch": "release"}, "only pushes to main"),
        ({"head_repo": "someone/bench"}, "not acme/bench's"),
        ({"path": ".github/workflows/other.yml"}, "not of run-sweep.yml"),
        ({"status": "in_progress", "conclusion": None}, "once it has finished"),
    ],
)
def test_only_a_finished_push_to_main_is_recovered(
    repo: GitRepo, api: FakeGitHub, tmp_path: Path, run: dict, why: str
) -> None:
    main_run(api, **run)
    db = tmp_path / "history.sqlite"
    done = recover(repo, db, str(RUN))
    assert done.exit_code == 1 and why in done.output, done.output
    assert not db.exists() or stored(db) == []


def test_a_run_with_a_failed_gpu_job_is_not(repo: GitRepo, api: FakeGitHub, tmp_path: Path) -> None:
    """A failed eval's upload holds its score below the floor: the ingest job would not
    have stored the run, and neither does its recovery."""
    main_run(api)
    api.state.jobs[RUN][1]["conclusion"] = "failure"
    db = tmp_path / "history.sqlite"
    done = recover(repo, db, str(RUN))
    assert done.exit_code == 1 and "single/0/1 y (failure)" in done.output
    assert stored(db) == []


def test_a_table_the_receipt_does_not_seal_is_refused(
    repo: GitRepo, api: FakeGitHub, tmp_path: Path
) -> None:
    main_run(api)
    api.state.blobs[RUN * 100] = zipped_table(table(RUN, curve(9000), sha=SHA))  # after sealing
    db = tmp_path / "history.sqlite"
    done = recover(repo, db, str(RUN))
    assert done.exit_code == 1 and "not the one run 4242's receipt sealed" in done.output
    assert stored(db) == []


def test_another_runs_table_needs_a_merge_receipt(
    repo: GitRepo, api: FakeGitHub, tmp_path: Path
) -> None:
    main_run(api)
    api.state.blobs[RUN * 100] = zipped_table(table(77, curve(1000), sha=SHA))
    seal(api.state, RUN, None, SHA)  # its receipt seals the foreign table, as run 4242's
    done = recover(repo, tmp_path / "h.sqlite", str(RUN))
    assert done.exit_code == 1, done.output
    assert "its table names run 77, its run receipt run 4242" in done.output


@pytest.mark.parametrize("missing", ["sweep-receipt", "results_bmk"])
def test_nothing_to_vouch_for_or_nothing_to_store(
    repo: GitRepo, api: FakeGitHub, tmp_path: Path, missing: str
) -> None:
    main_run(api)
    api.state.artifacts[RUN] = [a for a in api.state.artifacts[RUN] if a["name"] != missing]
    done = recover(repo, tmp_path / "h.sqlite", str(RUN))
    assert done.exit_code == 1 and f"published no {missing}" in done.output


def test_expired_results_cannot_be_recovered(
    repo: GitRepo, api: FakeGitHub, tmp_path: Path
) -> None:
    main_run(api)
    api.state.artifacts[RUN][0]["expired"] = True
    done = recover(repo, tmp_path / "h.sqlite", str(RUN))
    assert done.exit_code == 1 and "results_bmk has expired" in done.output


@pytest.mark.parametrize(
    "bad",
    [
        "abc",
        "0",
        "https://example.com/x/y/actions/runs/x",
        "\u00b2",
        "\u0661",  # isdecimal() and int() take other scripts' digits; a run id is ASCII
        "https://example.com/x/y/actions/runs/\u0661",
        str(2**63),  # more than the history stores
        "9" * 5000,  # int() of it raised (exit 3)
    ],
)
def test_a_run_that_is_no_run_is_a_usage_error(repo: GitRepo, tmp_path: Path, bad: str) -> None:
    done = recover(repo, tmp_path / "h.sqlite", bad)
    assert done.exit_code == 2 and "not a workflow run id or URL" in done.output
    assert json.dumps(bad, ensure_ascii=False)[1:-1][:20] in done.output
