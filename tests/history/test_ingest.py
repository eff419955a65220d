"""`infx results ingest`: a main run's results table into the history, as a user and as the
workflow call it, with one-line refusals for what must not go in."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from infx.history import open_history
from tests.conftest import GitRepo
from tests.github.fake_api import stamp
from tests.history.tables import curve, mixed, points, run_facts, table
from tests.results.ingest.test_collect import sweep


def write(path: Path, doc: dict) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(doc))
    return path


def runs_in(url: str) -> list[dict]:
    with open_history(url) as history:
        return history.main_runs()


def test_collect_then_ingest_with_default_options(repo: GitRepo) -> None:
    """In a benchmark repository: collect a main run's jobs, ingest the table; the history is
    .infx/history.sqlite, which git does not see."""
    bmk, evals = sweep(repo.path)
    env = {
        "GITHUB_RUN_ID": "777",
        "GITHUB_RUN_ATTEMPT": "2",
        "GITHUB_SHA": "f" * 40,
        "GITHUB_REF": "refs/heads/main",
        "GITHUB_REPOSITORY": "acme/bench",
    }
    collected = repo.infx("results", "collect", str(bmk), str(evals), "--out-dir", "out", env=env)
    assert collected.exit_code == 0, collected.output
    table_doc = json.loads((repo.path / "out/results.json").read_text())
    assert table_doc["run"]["attempt"] == 2
    outcome = repo.infx("results", "ingest", "out")
    assert outcome.exit_code == 0, outcome.output
    assert "run 777 attempt 2 (fffffff), 4 point(s): 4 added" in outcome.output
    url = f"sqlite:///{repo.path / '.infx/history.sqlite'}"
    assert str(repo.path / ".infx/history.sqlite") in outcome.output
    (back,) = runs_in(url)
    assert points(back) == points(table_doc)
    assert back["run"]["url"] == "https://github.com/acme/bench/actions/runs/777"
    again = repo.infx("results", "ingest", "out")
    assert again.exit_code == 0 and "0 added, 0 replaced, 4 unchanged" in again.output
    assert repo.git("status", "--porcelain", "--", ".infx") == ""


def test_where_from_option_environment_settings(repo: GitRepo, tmp_path: Path) -> None:
    results = write(tmp_path / "results.json", table(5000, curve(1000)))
    by_option, by_env = tmp_path / "option.sqlite", tmp_path / "env.sqlite"
    repo.write("infx.toml", 'history = "store/main.sqlite"\n')
    assert repo.infx("results", "ingest", str(results)).exit_code == 0
    assert runs_in(f"sqlite:///{repo.path / 'store/main.sqlite'}")
    env = {"INFX_HISTORY_URL": f"sqlite:///{by_env}"}
    assert repo.infx("results", "ingest", str(results), env=env).exit_code == 0
    assert runs_in(f"sqlite:///{by_env}")
    outcome = repo.infx("results", "ingest", str(results), "--history", str(by_option), env=env)
    assert outcome.exit_code == 0 and runs_in(f"sqlite:///{by_option}")
    assert not (repo.path / ".infx").exists()


def test_on_postgresql(repo: GitRepo, tmp_path: Path, history_url: str) -> None:
    results = write(tmp_path / "results.json", table(5000, mixed(1000)))
    env = {"INFX_HISTORY_URL": history_url}
    outcome = repo.infx("results", "ingest", str(results), env=env)
    assert outcome.exit_code == 0, outcome.output
    assert "9 point(s): 9 added" in outcome.output
    assert len(runs_in(history_url)[0]["rows"]) == 9


@pytest.mark.parametrize(
    ("doc", "code", "message"),
    [
        (
            table(5000, curve(1000), ref="refs/pull/7/merge"),
            1,
            "run 5000 ran on refs/pull/7/merge, not refs/heads/main: only main's runs",
        ),
        ({"format": "infx-results/1", "rows": []}, 1, "names no run"),
        # times the schema's pattern holds and no calendar does (an internal error, exit 3)
        (
            table(5000, curve(1000), created_at="2026-13-45T99:99:99Z"),
            1,
            "run 5000: created_at '2026-13-45T99:99:99Z' is no time: month must be in 1..12",
        ),
        (table(5000, curve(1000), created_at="2026-03-01T12:00:00+99:99"), 1, "is no time"),
        (table(5000, curve(1000), created_at="9999-12-31T23:59:59-23:59"), 1, "is no time"),
        ({"format": "infx-results/1", "run": run_facts(5000), "rows": [{}]}, 1, "rows.0"),
    ],
)
def test_refusals_are_one_line_and_store_nothing(
    repo: GitRepo, tmp_path: Path, doc: dict, code: int, message: str
) -> None:
    results = write(tmp_path / "results.json", doc)
    outcome = repo.infx("results", "ingest", str(results))
    assert outcome.exit_code == code, outcome.output
    assert message in outcome.output
    assert len(outcome.output.strip().splitlines()) == 1 and "Traceback" not in outcome.output
    assert runs_in(f"sqlite:///{repo.path / '.infx/history.sqlite'}") == []


def test_a_renamed_main_branch(repo: GitRepo, tmp_path: Path) -> None:
    repo.write("infx.toml", 'main-branch = "trunk"\n')
    main = write(tmp_path / "main.json", table(5000, curve(1000)))
    trunk = write(tmp_path / "trunk.json", table(5001, curve(1000), ref="refs/heads/trunk"))
    assert repo.infx("results", "ingest", str(main)).exit_code == 1
    assert repo.infx("results", "ingest", str(trunk)).exit_code == 0


def test_missing_and_unusable_places(repo: GitRepo, tmp_path: Path) -> None:
    missing = repo.infx("results", "ingest", str(tmp_path / "nope.json"))
    assert missing.exit_code == 2 and "no such file" in missing.output
    results = write(tmp_path / "results.json", table(5000, curve(1000)))
    bad = repo.infx("results", "ingest", str(results), "--history", "mysql://u@h/d")
    assert bad.exit_code == 2 and "mysql" in bad.output and "Traceback" not in bad.output
    (tmp_path / "text.sqlite").write_text("hello " * 200)
    broken = repo.infx(
        "results", "ingest", str(results), "--history", str(tmp_path / "text.sqlite")
    )
    assert broken.exit_code == 2 and "not a database" in broken.output


def test_a_foreign_sqlite_file_is_not_made_a_history(repo: GitRepo, tmp_path: Path) -> None:
    """An SQLite file of another program got infx's tables added beside its own; it is
    refused, untouched, while an empty file still becomes a history."""
    import sqlite3

    results = write(tmp_path / "results.json", table(5000, curve(1000)))
    foreign = tmp_path / "notes.sqlite"
    with sqlite3.connect(foreign) as conn:
        conn.execute("CREATE TABLE notes (body TEXT)")
    before = foreign.read_bytes()
    outcome = repo.infx("results", "ingest", str(results), "--history", str(foreign))
    assert outcome.exit_code == 2, outcome.output
    assert outcome.output == (
        f"infx: error: {foreign} is not an infx history database: it holds other tables "
        "(notes); name a new or empty file\n"
    )
    assert foreign.read_bytes() == before
    empty = tmp_path / "empty.sqlite"
    empty.write_bytes(b"")
    stored = repo.infx("results", "ingest", str(results), "--history", str(empty))
    assert stored.exit_code == 0, stored.output
    assert [r["run"]["id"] for r in runs_in(f"sqlite:///{empty}")] == [5000]


def test_the_run_facts_from_the_api(api, repo: GitRepo, tmp_path: Path) -> None:
    """In the workflow the run's facts come from GitHub: a reused sweep's table names the
    pull request's run, and its rows go in as this main run's."""
    api.state.add_run(4242, head_sha="e" * 40, minute=60, branch="main", event="push", artifacts=[])
    api.state.runs[-1]["run_attempt"] = 3
    pr_table = table(1039, curve(1000), ref="refs/pull/17/merge", sha="d" * 40)
    results = write(tmp_path / "results.json", pr_table)
    outcome = repo.infx("results", "ingest", str(results), "--run", "4242")
    assert outcome.exit_code == 0, outcome.output
    (back,) = runs_in(f"sqlite:///{repo.path / '.infx/history.sqlite'}")
    assert back["run"] == {
        "id": 4242,
        "attempt": 3,
        "sha": "e" * 40,
        "ref": "refs/heads/main",
        "url": "https://github.com/acme/bench/actions/runs/4242",
        "created_at": stamp(60),
        "reused_from": 1039,
    }
    assert ("GET", "/repos/acme/bench/actions/runs/4242") in api.state.requests


@pytest.mark.parametrize(("branch", "event"), [("feature", "push"), ("main", "pull_request")])
def test_the_api_must_say_a_push_to_main(
    api, repo: GitRepo, tmp_path: Path, branch: str, event: str
) -> None:
    api.state.add_run(4242, head_sha="e" * 40, minute=60, branch=branch, event=event)
    results = write(tmp_path / "results.json", table(4242, curve(1000)))
    outcome = repo.infx("results", "ingest", str(results), "--run", "4242")
    assert outcome.exit_code == 1, outcome.output
    assert f"run 4242 is a {event} run on {branch}" in outcome.output
    assert runs_in(f"sqlite:///{repo.path / '.infx/history.sqlite'}") == []


def test_a_run_attempted_again_since_is_not_stored(api, repo: GitRepo, tmp_path: Path) -> None:
    """A re-run started between the receipt check and the store: GitHub says attempt 2 is
    in progress, the table is attempt 1's; stamping attempt 2 on it would name rows no
    receipt sealed. The re-run's own ingest stores its results when it completes."""
    api.state.add_run(4242, head_sha="e" * 40, minute=60, branch="main", event="push",
                      status="in_progress", conclusion=None)  # fmt: skip
    api.state.runs[-1]["run_attempt"] = 2
    results = write(tmp_path / "results.json", table(4242, curve(1000)))
    outcome = repo.infx("results", "ingest", str(results), "--run", "4242")
    assert outcome.exit_code == 1, outcome.output
    assert "run 4242 is in_progress (attempt 2)" in outcome.output
    assert runs_in(f"sqlite:///{repo.path / '.infx/history.sqlite'}") == []


def test_a_table_that_contradicts_the_api(api, repo: GitRepo, tmp_path: Path) -> None:
    api.state.add_run(4242, head_sha="e" * 40, minute=60, branch="main", event="push")
    results = write(tmp_path / "results.json", table(4242, curve(1000), sha="d" * 40))
    outcome = repo.infx("results", "ingest", str(results), "--run", "4242")
    assert outcome.exit_code == 1 and "names commit ddddddd" in outcome.output
