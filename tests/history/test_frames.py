"""What a comparison reads of the history database: a frame of numbers from their columns,
each config's window from `run_series`, on the driver's own connection. It must hold what
the stored rows say (the documents `main_runs` rebuilds from their JSON), on SQLite and
PostgreSQL, whatever the ingests did (attempts, corrected tables, two configs measuring one
identity, an image bump, accuracy scores), and a comparison must never write the history
nor load what it does not need."""

from __future__ import annotations

import copy
import hashlib
import json
import math
import subprocess
import sys
from pathlib import Path

import pytest

from infx.errors import HistoryError
from infx.history import open_history
from infx.history.frames import read
from infx.history.reader import reading
from infx.results.table.frame import Frame, of_documents
from infx.results.table.keys import config_key, family_key
from infx.results.verdict.document import to_json
from infx.results.verdict.judge import compare
from tests.history.tables import curve, identity, mixed, sql, table
from tests.history.test_store import _twins
from tests.history.test_windows import _main, _pr


def _read(frame: Frame) -> tuple[list[dict], list[tuple]]:
    """A frame as its runs and, per point, what it measured and its numbers (None: NaN)."""
    measured = []
    for point in range(len(frame.run)):
        series = frame.series[int(frame.of[point])]
        values = [None if math.isnan(v) else v for v in frame.values[point].tolist()]
        run = frame.runs[int(frame.run[point])]["id"]
        key = (series.kind, config_key(series.identity), series.measured_by, series.image)
        measured.append((run, key, int(frame.conc[point]), values))
    return list(frame.runs), sorted(measured, key=repr)


def _history(url: str) -> list[dict]:
    """Ingests of every kind: a config swept every run and one every fifth, a run with
    accuracy and a multi-node config, two master configs measuring one identity, an image
    bump, a second attempt, a corrected table that drops a config from a run."""
    docs = _main(8)
    with open_history(url) as history:
        for doc in docs:
            history.ingest(doc)
        history.ingest(table(2000, mixed(1000), minute=60 * 24 * 40))
        history.ingest(table(2001, _twins(1000), minute=60 * 24 * 41))
        bumped = table(2002, mixed(1100), minute=60 * 24 * 42)
        for row in bumped["rows"]:
            row["recipe"]["image"] = "vllm/vllm-openai:v0.99"
        history.ingest(bumped)
        history.ingest(table(2002, mixed(1150), minute=60 * 24 * 42, attempt=2))
        history.ingest(table(2003, mixed(1200), minute=60 * 24 * 43))
        history.ingest(table(2003, mixed(1200)[:3], minute=60 * 24 * 43))  # corrected
    return [*docs, table(2000, mixed(1000))]


def test_what_a_comparison_reads_is_what_the_rows_say(history_url: str) -> None:
    """Each window's numbers, on SQLAlchemy's connection and on the driver's own (what
    `results compare` uses), are the rows `main_runs` rebuilds from their JSON; the
    verdict on them is the verdict on the rows; `run_series` is what the points say."""
    docs = _history(history_url)
    wanted = [identity(r) for d in docs for r in d["rows"]] + [identity(r) for r in _twins(1)]
    with open_history(history_url) as history:
        for limit in (1, 2, 3, 10):
            for configs in (wanted, wanted[:1], [identity(mixed(1)[-1])]):
                frame = history.main_frame(limit=limit, configs=configs)
                rows = history.main_runs(limit=limit, configs=configs)
                assert _read(frame) == _read(of_documents(rows)), (limit, configs)
                assert len(frame) == len(rows) > 0
                # Accuracy points keep their scores; every row shown is the row stored.
                for point in range(len(frame.run)):
                    row, doc = frame.row(point), rows[int(frame.run[point])]
                    assert any(
                        r["identity"] == row["identity"]
                        and r.get("accuracy") == row.get("accuracy")
                        for r in doc["rows"]
                    )
        # A corrected table that dropped the multi-node config from run 2003 took the
        # run out of that config's window.
        multinode = history.main_frame(limit=1, configs=[identity(mixed(1)[-2])])
        assert [run["id"] for run in multinode.runs] == [2002]
    held = sql(
        history_url,
        "SELECT DISTINCT s.id, p.run_id FROM points p JOIN series s ON s.config_id = "
        "p.config_id AND s.kind = p.kind AND s.variant = p.variant AND s.image = p.image "
        "ORDER BY 1, 2",
    )
    assert sql(history_url, "SELECT series_id, run_id FROM run_series ORDER BY 1, 2") == held
    pr = _pr()
    keys = {config_key(r["identity"]) for r in pr["rows"]}
    families = {family_key("", r["identity"]) for r in [*pr["rows"], *mixed(1)]}
    with reading(history_url) as db:
        fast = read(db, 10, keys, families)
    wanted = [r for r in wanted if family_key("", r) in families]
    with open_history(history_url) as history:
        slow = history.main_frame(limit=10, configs=wanted)
        rows = history.main_runs(limit=10, configs=wanted)
    assert _read(fast) == _read(slow) == _read(of_documents(rows))
    verdict = to_json(compare(pr["rows"], fast))
    assert verdict == to_json(compare(pr["rows"], rows))
    assert verdict["configs"]  # something was judged


def test_a_comparison_never_writes_the_history(tmp_path: Path) -> None:
    database = tmp_path / "history.sqlite"
    _history(f"sqlite:///{database}")
    before = hashlib.sha256(database.read_bytes()).hexdigest()
    (tmp_path / "pr.json").write_text(json.dumps(_pr()))
    code = (
        "import sys\n"
        "from infx.cli import cli\n"
        "try:\n"
        f"    cli(['results', 'compare', {str(tmp_path / 'pr.json')!r}, '--history',"
        f" {str(database)!r}], prog_name='infx')\n"
        "except SystemExit:\n"
        "    pass\n"
        "heavy = ('sqlalchemy', 'alembic', 'psycopg', 'github', 'jsonschema', 'matplotlib',"
        " 'numpy.ma')\n"
        "print(sorted(m for m in heavy if m in sys.modules), file=sys.stderr)\n"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert "Benchmark results against main" in done.stdout, done.stderr
    assert done.stderr.strip().splitlines()[-1] == "[]"
    assert hashlib.sha256(database.read_bytes()).hexdigest() == before
    assert sorted(p.name for p in tmp_path.iterdir()) == ["history.sqlite", "pr.json"]


def test_an_empty_window_reads_nothing(history_url: str) -> None:
    with open_history(history_url) as history:
        history.ingest(table(5000, curve(1000)))
        assert len(history.main_frame(limit=0, configs=[identity(curve(1)[0])])) == 0
        assert len(history.main_frame(limit=5, configs=[{**identity(curve(1)[0]), "tp": 3}])) == 0
        frame = history.main_frame(limit=5, configs=[identity(curve(1)[0])])
    assert [r["id"] for r in frame.runs] == [5000] and len(frame.run) == 3
    again = copy.deepcopy(frame)
    assert _read(again.without_runs({5000})) == ([], [])


def test_a_series_without_its_numbers_is_refused_not_read_as_unmeasured(
    history_url: str,
) -> None:
    """A `run_series` row written outside infx (or by hand) without its packed numbers
    would read as a run that measured nothing: the comparison says which run to store
    again instead of judging without it."""
    with open_history(history_url) as history:
        history.ingest(table(5000, curve(1000)))
        history.ingest(table(5001, curve(1010), minute=10))
    sql(history_url, "UPDATE run_series SET numbers = NULL WHERE run_id = 5001")
    key = config_key(identity(curve(1)[0]))
    with reading(history_url) as db, pytest.raises(HistoryError, match=r"run 5001 .* again"):
        read(db, 5, {key})
    # Stored again, unchanged, as the message says: read as it was.
    with open_history(history_url) as history:
        history.ingest(table(5001, curve(1010), minute=10))
    with reading(history_url) as db:
        assert sorted(r["id"] for r in read(db, 5, {key}).runs) == [5000, 5001]
