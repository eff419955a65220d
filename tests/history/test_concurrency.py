"""Ingests that overlap, as separate processes on one database: a new database migrated by
several at once, different runs and the same run stored at the same moment. Each process
loads everything first and waits at a barrier, so the ingests really start together."""

from __future__ import annotations

import json
import multiprocessing
from pathlib import Path

from infx.history import open_history
from tests.history.tables import curve, mixed, table


def _ingest(barrier, url: str, path: str, results) -> None:  # runs in a child process
    import contextlib
    import io

    import alembic.command  # noqa: F401  (loaded before the barrier, like the rest)
    import psycopg  # noqa: F401
    import sqlalchemy  # noqa: F401

    import infx.cli.results
    import infx.history.store  # noqa: F401
    from infx.cli import cli

    out = io.StringIO()
    barrier.wait(timeout=60)
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(out):
        code = cli.main(
            ["results", "ingest", path, "--history", url], prog_name="infx", standalone_mode=False
        )
    results.put((path, code or 0, out.getvalue()))


def ingest_together(url: str, paths: list[Path]) -> list[tuple[str, int, str]]:
    spawn = multiprocessing.get_context("spawn")
    barrier, results = spawn.Barrier(len(paths)), spawn.Queue()
    procs = [spawn.Process(target=_ingest, args=(barrier, url, str(p), results)) for p in paths]
    for proc in procs:
        proc.start()
    done = [results.get(timeout=180) for _ in procs]
    for proc in procs:
        proc.join(timeout=30)
        assert proc.exitcode == 0
    return done


def test_overlapping_ingests_store_every_run_once(history_url: str, tmp_path: Path) -> None:
    files = []
    for run_id in (5000, 5001, 5002, 5003):
        path = tmp_path / f"{run_id}.json"
        path.write_text(json.dumps(table(run_id, mixed(run_id), minute=run_id - 5000)))
        files.append(path)
    twin = tmp_path / "5000-again.json"  # the same run twice at once
    twin.write_text(files[0].read_text())
    rerun = tmp_path / "5001-2.json"  # and a re-run's table of another
    rerun.write_text(json.dumps(table(5001, curve(9000), attempt=2, minute=1)))
    outputs = ingest_together(history_url, [*files, twin, rerun])
    assert all(code == 0 for _, code, _ in outputs), outputs
    with open_history(history_url) as history:
        runs = history.main_runs()
    assert [d["run"]["id"] for d in runs] == [5000, 5001, 5002, 5003]
    for doc in runs:
        keys = [(r["kind"], json.dumps(r["identity"], sort_keys=True)) for r in doc["rows"]]
        assert len(keys) == len(set(keys)) == 9
    by_conc = {
        r["identity"]["conc"]: r["metrics"]["tput_per_gpu"]
        for r in runs[1]["rows"]
        if r["kind"] == "throughput" and r["identity"].get("tp") == 4
    }
    assert by_conc == {4: 9000, 8: 9000, 16: 9000}
    assert runs[1]["run"]["attempt"] == 2
    twins = sorted(out for path, _, out in outputs if "5000" in Path(path).name)
    assert sorted("9 added" in out for out in twins) == [False, True]
    assert any("9 unchanged" in out for out in twins)
