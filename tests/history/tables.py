"""Results tables of main's runs, as `infx results collect` writes them."""

from __future__ import annotations

import copy
from typing import Any

from infx.results.ingest.process import document
from tests.github.fake_api import stamp
from tests.results.compare.test_compare import accuracy, point
from tests.results.formats import multinode_row

REPO_URL = "https://github.com/acme/bench"


def run_facts(run_id: int, *, attempt: int = 1, minute: float = 0, **extra: Any) -> dict:
    facts = {
        "id": run_id,
        "attempt": attempt,
        "sha": f"{run_id:040x}",
        "ref": "refs/heads/main",
        "url": f"{REPO_URL}/actions/runs/{run_id}",
        "created_at": stamp(minute),
    }
    facts.update(extra)
    return facts


def table(run_id: int, rows: list[dict], **facts: Any) -> dict:
    return document(copy.deepcopy(rows), run_facts(run_id, **facts))


def curve(tput: float, *, tp: int = 4, concs: tuple[int, ...] = (4, 8, 16)) -> list[dict]:
    """One config's throughput points (throughput per GPU `tput` at every concurrency)."""
    return [point(c, tput=tput, tpot_ms=20, tp=tp) for c in concs]


def multinode(tput: float) -> list[dict]:
    from infx.results.ingest.clients import ClientRun
    from infx.results.ingest.process import throughput_row

    row = multinode_row()
    run = ClientRun(
        "vllm-bench-serve",
        total_tput=tput * 48,
        output_tput=tput * 16,
        completed=64,
        latencies_ms={"mean_ttft": 900.0, "p99_ttft": 1400.0, "mean_tpot": 30.0},
    )
    return [throughput_row(row, run, c, f"dsr1_8k1k_conc{c}.json") for c in (64, 128)]


def mixed(tput: float) -> list[dict]:
    """Throughput rows of two configs, a multi-node config and an accuracy row."""
    return [*curve(tput), *curve(tput * 2, tp=8), *multinode(tput), accuracy(16, 0.97, 0.004)]


def identity(row: dict) -> dict:
    return {k: v for k, v in row["identity"].items() if k != "conc"}


def points(doc: dict) -> dict[tuple, dict]:
    """(kind, config, conc) -> row: a table's rows by the point they measure."""
    import json

    return {
        (r["kind"], json.dumps(identity(r), sort_keys=True), r["identity"]["conc"]): r
        for r in doc["rows"]
    }


def sql(url: str, statement: str) -> list[tuple] | None:
    """Run one SQL statement on the history database at `url` (rows, for a query)."""
    from sqlalchemy import text

    from infx.history.database import engine

    with engine(url).begin() as conn:
        result = conn.execute(text(statement))
        return [tuple(r) for r in result] if result.returns_rows else None
