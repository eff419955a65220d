"""`infx results backfill --runs N`: main's recent results_bmk artifacts into the history,
through the GitHub API (a local fake), within a request budget, idempotent."""

from __future__ import annotations

import pytest
from click.testing import CliRunner

from infx.cli import cli
from infx.history import open_history
from tests.github.fake_api import Fault, stamp
from tests.history.artifacts import zipped_table
from tests.history.tables import curve, run_facts, table
from tests.results.compare.test_compare_api import zipped


def main_run(api, run_id: int, rows: list[dict] | None, minute: float, **kwargs) -> None:
    """A successful push run on main; its results_bmk holds `rows` (None: no results_bmk)."""
    api.state.add_run(
        run_id,
        head_sha=f"{run_id:040x}",
        minute=minute,
        branch="main",
        event="push",
        artifacts=["results_bmk", "changelog-metadata"] if rows is not None else ["run-stats"],
        **kwargs,
    )
    if rows is not None:
        api.state.blobs[run_id * 100] = zipped_table(table(run_id, rows, minute=minute))


def backfill(url: str, *args: str):
    return CliRunner().invoke(cli, ["results", "backfill", "--history", url, *args])


def stored(url: str) -> list[dict]:
    with open_history(url) as history:
        return history.main_runs(limit=100)


def history_with_noise(api) -> None:
    """Six main runs 5000..5005 (5002 without results, 5004 expired), newest last, and
    runs that are not main's successful pushes."""
    for i in range(6):
        rows = None if i == 2 else curve(1000 + i)
        main_run(api, 5000 + i, rows, minute=100 * i, expired=i == 4)
    main_run(api, 5100, curve(1), minute=700, conclusion="failure")
    api.state.add_run(5200, head_sha="d" * 40, minute=800, branch="feature")
    api.state.blobs[520000] = zipped(curve(2))


def test_the_last_runs_fill_the_history(api, history_url: str) -> None:
    history_with_noise(api)
    outcome = backfill(history_url, "--runs", "5")
    assert outcome.exit_code == 0, outcome.output
    runs = stored(history_url)
    assert [d["run"]["id"] for d in runs] == [5001, 5003, 5005]
    assert runs[-1]["run"] == {
        "id": 5005,
        "attempt": 1,
        "sha": f"{5005:040x}",
        "ref": "refs/heads/main",
        "url": "https://github.com/acme/bench/actions/runs/5005",
        "created_at": stamp(500),
    }
    assert "stored 3 run(s)" in outcome.output
    assert "run 5004 (results expired)" in outcome.output
    # runs, results_bmk artifacts, three downloads.
    assert api.state.api_requests() == 5
    assert api.state.blob_auth == [None, None, None]


def test_a_second_backfill_downloads_nothing(api, history_url: str) -> None:
    history_with_noise(api)
    assert backfill(history_url, "--runs", "6").exit_code == 0
    first = stored(history_url)
    before = api.state.api_requests()
    again = backfill(history_url, "--runs", "6")
    assert again.exit_code == 0, again.output
    assert "stored 0 run(s)" in again.output and "4 already stored" in again.output
    assert api.state.api_requests() - before == 2
    assert stored(history_url) == first


def test_a_rerun_replaces_the_points_it_measured_again(api, history_url: str) -> None:
    main_run(api, 5000, curve(1000), minute=0)
    assert backfill(history_url, "--runs", "1").exit_code == 0
    api.state.runs[0]["run_attempt"] = 2
    api.state.blobs[500000] = zipped_table(table(5000, curve(1100, concs=(8, 16)), attempt=2))
    outcome = backfill(history_url, "--runs", "1")
    assert outcome.exit_code == 0, outcome.output
    (run,) = stored(history_url)
    assert run["run"]["attempt"] == 2
    tput = {r["identity"]["conc"]: r["metrics"]["tput_per_gpu"] for r in run["rows"]}
    assert tput == {4: 1000, 8: 1100, 16: 1100}


def test_a_reused_sweep_without_receipts_stays_out(api, history_url: str) -> None:
    """A main run that reused a PR's sweep republishes the PR run's table, which the PR's
    code wrote: without the issuer's receipts that vouch for it (none here), it is skipped
    and named, never stored as main's (tests/actions/test_provenance_chain.py stores one
    with them). A table naming no run of its own is such a table too."""
    api.state.add_run(5000, head_sha=f"{5000:040x}", minute=0, branch="main", event="push")
    pr_table = table(1039, curve(1000), ref="refs/pull/17/merge", sha="d" * 40)
    api.state.blobs[500000] = zipped_table(pr_table)
    api.state.add_run(5001, head_sha=f"{5001:040x}", minute=10, branch="main", event="push")
    api.state.blobs[500100] = zipped_table({k: v for k, v in pr_table.items() if k != "run"})
    outcome = backfill(history_url, "--runs", "2", "--budget", "20")
    assert outcome.exit_code == 0, outcome.output
    assert stored(history_url) == []
    assert "run 5000 has no receipt from the issuer" in outcome.output
    assert "run 5001 has no receipt from the issuer" in outcome.output


def test_tables_that_cannot_be_trusted_are_skipped(api, history_url: str) -> None:
    main_run(api, 5000, curve(1000), minute=0)
    main_run(api, 5001, curve(1000), minute=10)
    main_run(api, 5002, curve(1000), minute=20)
    # 5001's table claims another commit for its own run; 5002's is not a results table.
    api.state.blobs[500100] = zipped_table(table(5001, curve(1000), sha="d" * 40))
    api.state.blobs[500200] = b"PK\x03\x04 not really a zip"
    outcome = backfill(history_url, "--runs", "3")
    assert outcome.exit_code == 0, outcome.output
    assert [d["run"]["id"] for d in stored(history_url)] == [5000]
    assert "run 5001: its table names commit ddddddd, GitHub says 0000000" in outcome.output
    assert "run 5002: unreadable results.json" in outcome.output


def test_the_request_budget_bounds_the_backfill(api, history_url: str) -> None:
    for i in range(10):
        main_run(api, 5000 + i, curve(1000 + i), minute=10 * i)
    outcome = backfill(history_url, "--runs", "10", "--budget", "5")
    assert outcome.exit_code == 0, outcome.output
    assert "request budget of 5 spent" in outcome.output
    assert api.state.api_requests() == 5
    assert [d["run"]["id"] for d in stored(history_url)] == [5007, 5008, 5009]


def test_runs_older_than_the_artifact_page_are_looked_up(api, history_url: str) -> None:
    main_run(api, 5000, curve(1000), minute=0)
    for i in range(120):  # newer pull-request runs fill the repository's artifact page
        api.state.add_run(7000 + i, head_sha=f"{i:040x}", minute=2000 + i, branch="feature")
    main_run(api, 5001, curve(1001), minute=5000)
    outcome = backfill(history_url, "--runs", "2")
    assert outcome.exit_code == 0, outcome.output
    assert [d["run"]["id"] for d in stored(history_url)] == [5000, 5001]
    assert (
        "GET",
        "/repos/acme/bench/actions/runs/5000/artifacts?name=results_bmk&per_page=100",
    ) in api.state.requests


@pytest.mark.parametrize(
    "fault",
    [
        Fault(r"/actions/workflows/", 404, body={"message": "Not Found"}, times=9),
        Fault(r"/actions/artifacts\?", 200, body={"artifacts": "many"}, times=9),
    ],
)
def test_api_trouble_is_exit_2_and_one_line(api, history_url: str, fault: Fault) -> None:
    main_run(api, 5000, curve(1000), minute=0)
    api.state.faults.append(fault)
    outcome = backfill(history_url, "--runs", "1")
    assert outcome.exit_code == 2, outcome.output
    assert "Traceback" not in outcome.output and len(outcome.output.strip().splitlines()) == 1
    assert stored(history_url) == []


def test_only_what_github_calls_a_successful_push_to_main(api, history_url: str) -> None:
    """The listing is asked for successful pushes to main; a run it answers with anyway
    that is not one (another branch, another event, not successful) is not stored."""
    main_run(api, 5000, curve(1000), minute=0)
    main_run(api, 5001, curve(1), minute=10)
    main_run(api, 5002, curve(2), minute=20)
    main_run(api, 5003, curve(3), minute=30)
    api.state.runs[1]["head_branch"] = "feature"
    api.state.runs[2]["event"] = "workflow_dispatch"
    listing = {"total_count": 4, "workflow_runs": list(reversed(api.state.runs))}
    listing["workflow_runs"][0] = {**listing["workflow_runs"][0], "conclusion": "failure"}
    api.state.faults.append(Fault(r"/actions/workflows/run-sweep.yml/runs", body=listing))
    outcome = backfill(history_url, "--runs", "4")
    assert outcome.exit_code == 0, outcome.output
    assert [d["run"]["id"] for d in stored(history_url)] == [5000]


def test_usage(api, tmp_path) -> None:
    url = f"sqlite:///{tmp_path / 'h.sqlite'}"
    assert backfill(url, "--runs", "0").exit_code == 2
    assert backfill(url, "--runs", "101").exit_code == 2
    assert backfill(url).exit_code == 2  # --runs is required


def test_backfilled_runs_and_ingested_runs_are_one_history(api, history_url: str) -> None:
    main_run(api, 5000, curve(1000), minute=0)
    with open_history(history_url) as history:
        history.ingest(table(5001, curve(1001), minute=10))
    assert backfill(history_url, "--runs", "1").exit_code == 0
    assert [d["run"] for d in stored(history_url)] == [
        run_facts(5000, minute=0),
        run_facts(5001, minute=10),
    ]


def test_a_run_where_two_configs_measure_one_identity_is_filled_in(api, history_url: str) -> None:
    """Main's full sweeps hold such points (39 in InferenceX's configs): the backfill
    skipped every one of them ("measure one point twice"), so the history had none of
    main's full sweeps."""
    from tests.history.test_store import _twins

    main_run(api, 5000, _twins(1000), minute=0)
    outcome = backfill(history_url, "--runs", "1")
    assert outcome.exit_code == 0, outcome.output
    assert "stored 1 run(s) (6 point(s) added" in outcome.output
    (run,) = stored(history_url)
    assert (
        sorted(r["recipe"]["config-key"] for r in run["rows"]) == ["llama-a"] * 3 + ["llama-b"] * 3
    )
