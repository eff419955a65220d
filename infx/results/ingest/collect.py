"""All job results of one run -> one results table (JSON document and CSV records)."""

from __future__ import annotations

import csv
import io
import json
from dataclasses import dataclass, field
from functools import cache
from pathlib import Path

from infx import schemas
from infx.errors import ResultsError, UsageError
from infx.numbers import SQLITE_INTEGER_END, decimal
from infx.results.ingest.process import TABLE_FILE, document, encoded
from infx.results.render.summary import summary
from infx.results.table.keys import point_key
from infx.results.table.rows import Accuracy, Row, RunInfo, Table, config_identity

_WORKER_COLUMNS = ("num-worker", "tp", "pp", "dcp-size", "pcp-size", "ep", "dp-attn", "hardware")


@cache
def csv_columns() -> tuple[str, ...]:
    """The CSV header, in the order schemas/results-csv.schema.json lists the columns."""
    return tuple(schemas.load("results-csv")["properties"])


def _sort_key(row: Row) -> tuple[str, str, int]:
    ident = config_identity(row["identity"])
    return (row["kind"], json.dumps(ident, sort_keys=True), row["identity"]["conc"])


@dataclass
class Merged:
    """One results table, each point once, and where its rows came from."""

    table: Table
    earlier: int = 0  # points kept from earlier runs
    fresh: int = 0  # points this run measured
    replaced: int = 0  # of those, points an earlier run had measured too
    duplicates: dict[str, list[str]] = field(default_factory=dict)  # point -> job files


def merge(
    jobs: list[tuple[str, Table]],
    run: RunInfo | None = None,
    previous: list[Table] | None = None,
) -> Table:
    """Rows of every job file, each point once, in a stable order (kind, config,
    concurrency); see `merge_runs`."""
    return merge_runs(jobs, run, previous).table


def merge_runs(
    jobs: list[tuple[str, Table]],
    run: RunInfo | None = None,
    previous: list[Table] | None = None,
) -> Merged:
    """This run's job files over the tables of earlier runs (oldest first): a point this run
    measured replaces an earlier run's, a newer earlier table an older one; a job that left
    no result removes nothing. Two job files of this run with the same point keep the later
    one in file order (a re-run job of the same name overwrites its artifact, so this only
    happens when the plan itself held a point twice) and are reported."""
    points: dict[str, Row] = {}
    for table in previous or []:
        for row in table["rows"]:
            points[point_key(row)] = row
    earlier = set(points)
    seen: dict[str, list[str]] = {}
    for name, doc in jobs:
        for row in doc["rows"]:
            key = point_key(row)
            seen.setdefault(key, [])
            if name not in seen[key]:
                seen[key].append(name)
            points[key] = row
    rows = sorted(points.values(), key=_sort_key)
    return Merged(
        document(rows, run),
        earlier=len(earlier - set(seen)),
        fresh=len(seen),
        replaced=len(earlier & set(seen)),
        duplicates={_label(points[k]): names for k, names in seen.items() if len(names) > 1},
    )


def _label(row: Row) -> str:
    ident = row["identity"]
    return (
        f"{row['kind']} {ident['model-prefix']} {ident['precision']} {ident['framework']} "
        f"on {ident['runner']} conc {ident['conc']}"
    )


def _text(value: object) -> str:
    if value is None:
        return ""
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, float):
        return repr(value)
    if isinstance(value, dict | list):
        return json.dumps(value, sort_keys=True, separators=(",", ":"))
    return str(value)


def _flat(row: Row) -> dict[str, object]:
    ident = row["identity"]
    flat: dict[str, object] = {"kind": row["kind"], "client": row["client"]}
    for key, value in ident.items():
        if key in ("prefill", "decode") and isinstance(value, dict):
            for column in _WORKER_COLUMNS:
                flat[f"{key}-{column}"] = value.get(column)
        else:
            flat[key] = value
    rec = row["recipe"]
    flat.update({k: rec.get(k) for k in ("image", "exp-name", "recipe-fingerprint")})
    gpu = row["gpus"]
    flat.update(
        {"gpus": gpu["total"], "prefill-gpus": gpu.get("prefill"), "decode-gpus": gpu.get("decode")}
    )
    flat["source"] = row.get("source")
    flat.update(row.get("metrics", {}))
    return flat


def csv_records(doc: Table) -> list[dict[str, str]]:
    """One record per throughput row and one per accuracy score, every column present."""
    columns = csv_columns()
    records = []
    for row in doc["rows"]:
        base = _flat(row)
        scores: list[Accuracy | None] = [*row.get("accuracy", [])] or [None]
        for score in scores:
            values = dict(base)
            if score:
                values.update(score)
            records.append({c: _text(values.get(c)) for c in columns})
    return records


def csv_text(doc: Table) -> str:
    """results.csv: the header, then every record, each checked against its schema."""
    records = csv_records(doc)
    for record in records:
        problems = schemas.errors("results-csv", record)
        if problems:
            raise ResultsError(
                f"CSV record breaks its schema: {problems[0].message}", internal=True
            )
    buffer = io.StringIO()
    writer = csv.DictWriter(buffer, fieldnames=csv_columns(), lineterminator="\n")
    writer.writeheader()
    writer.writerows(records)
    return buffer.getvalue()


def run_metadata(
    run_id: str, sha: str, ref: str, attempt: str, repository: str | None, server: str
) -> RunInfo:
    """The table's `run`, from the Actions environment: the id (and attempt, URL) only for
    a real run."""
    run: RunInfo = {}
    number = _whole(run_id, "--run-id (GITHUB_RUN_ID)")
    if number:
        run["id"] = number
        if tries := _whole(attempt, "--run-attempt (GITHUB_RUN_ATTEMPT)"):
            run["attempt"] = tries
        if repository:
            run["url"] = f"{server}/{repository}/actions/runs/{run_id}"
    if sha:
        run["sha"] = sha
    if ref:
        run["ref"] = ref
    return run


def _whole(text: str, name: str) -> int:
    """A run id or attempt: 0 when unset or 0 (not a real run), else a whole number that a
    history row holds; `²` passed isdigit() and crashed int(), 2**63 the schema."""
    if not text or text == "0":
        return 0
    number = decimal(text, below=SQLITE_INTEGER_END)
    if number is None:
        raise UsageError(f"{name} must be a whole number, not {text!r}")
    return number


@dataclass(frozen=True)
class Collected:
    """The files `collect` writes (name -> bytes), the job summary, and what it says."""

    files: dict[str, bytes]
    summary: str
    warnings: list[str]  # stderr
    said: list[str]  # stdout


def collect(
    jobs: list[tuple[str, Table]],
    earlier: list[Table],
    run: RunInfo,
    *,
    roots: list[Path],
    out_dir: Path,
) -> Collected:
    """This run's job files over the earlier runs' tables: results.json, results.csv and
    summary.md, with a warning per point measured twice."""

    warnings = []
    if not jobs:
        warnings.append("infx: warning: no infx-result.json below " + " ".join(map(str, roots)))
    merged = merge_runs(jobs, run, earlier)
    for point, names in merged.duplicates.items():
        warnings.append(
            f"infx: warning: point {point} was measured by {len(names)} job files; "
            f"kept {names[-1]} (also: {', '.join(names[:-1])})"
        )
    table = merged.table
    markdown = summary(table)
    files = {
        TABLE_FILE: encoded(table),
        "results.csv": csv_text(table).encode(),
        "summary.md": markdown.encode(),
    }
    said = [f"collected {len(table['rows'])} row(s) from {len(jobs)} file(s) into {out_dir}"]
    if earlier:
        said.append(
            f"{len(table['rows'])} point(s): {merged.earlier} from earlier runs, "
            f"{merged.fresh} from this run ({merged.replaced} replacing earlier)"
        )
    return Collected(files, markdown, warnings, said)
