"""Ingests that overlap, as separate processes on one database: a fresh database migrated
by several at once, different runs and the same run stored at the same time."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

from infx.history import open_history
from tests.history.tables import curve, mixed, table
from tests.workflows.harness import INFX


def test_overlapping_ingests_store_every_run_once(history_url: str, tmp_path: Path) -> None:
    files = []
    for run_id in (5000, 5001, 5002, 5003):
        path = tmp_path / f"{run_id}.json"
        path.write_text(json.dumps(table(run_id, mixed(run_id), minute=run_id - 5000)))
        files.append(path)
    files.append(files[0])  # the same run twice at once (two attempts' jobs, say)
    rerun = tmp_path / "5001-2.json"
    rerun.write_text(json.dumps(table(5001, curve(9000), attempt=2, minute=1)))
    files.append(rerun)
    procs = [
        subprocess.Popen(
            [str(INFX), "results", "ingest", str(path), "--history", history_url],
            stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT,
            text=True,
        )
        for path in files
    ]
    outputs = [(p.wait(timeout=120), p.stdout.read()) for p in procs]
    assert all(code == 0 for code, _ in outputs), outputs
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
    added = [out for code, out in outputs[:5] if "run 5000" in out]
    assert sorted("9 point(s) added" in out for out in added) == [False, True]
