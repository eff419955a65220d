"""All job results of one run -> one results table (JSON document and CSV records)."""

from __future__ import annotations

import csv
import io
import json
from functools import cache
from typing import Any

from infx.errors import ResultsError
from infx.results.process import document
from infx.schemas import errors as schema_errors
from infx.schemas import schema_path

_WORKER_COLUMNS = ("num-worker", "tp", "pp", "dcp-size", "pcp-size", "ep", "dp-attn", "hardware")


@cache
def csv_columns() -> tuple[str, ...]:
    """The CSV header, in the order schemas/results-csv.schema.json lists the columns."""
    schema = json.loads(schema_path("results-csv").read_text(encoding="utf-8"))
    return tuple(schema["properties"])


def _sort_key(row: dict[str, Any]) -> tuple[str, str, int]:
    ident = dict(row["identity"])
    conc = ident.pop("conc")
    return (row["kind"], json.dumps(ident, sort_keys=True), conc)


def merge(
    jobs: list[tuple[str, dict[str, Any]]], run: dict[str, Any] | None = None
) -> dict[str, Any]:
    """Rows of every job file, in a stable order (kind, config, concurrency)."""
    rows = [row for _, doc in jobs for row in doc["rows"]]
    rows.sort(key=_sort_key)
    return document(rows, run)


def _text(value: Any) -> str:
    if value is None:
        return ""
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, float):
        return repr(value)
    if isinstance(value, dict | list):
        return json.dumps(value, sort_keys=True, separators=(",", ":"))
    return str(value)


def _flat(row: dict[str, Any]) -> dict[str, Any]:
    ident = row["identity"]
    flat: dict[str, Any] = {"kind": row["kind"], "client": row["client"]}
    for key, value in ident.items():
        if key in ("prefill", "decode"):
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


def csv_records(doc: dict[str, Any]) -> list[dict[str, str]]:
    """One record per throughput row and one per accuracy score, every column present."""
    columns = csv_columns()
    records = []
    for row in doc["rows"]:
        base = _flat(row)
        for score in row.get("accuracy") or [None]:
            values = dict(base)
            if score:
                values.update(score)
            records.append({c: _text(values.get(c)) for c in columns})
    return records


def csv_text(doc: dict[str, Any]) -> str:
    """results.csv: the header, then every record, each checked against its schema."""
    records = csv_records(doc)
    for record in records:
        problems = schema_errors("results-csv", record)
        if problems:
            raise ResultsError(
                f"CSV record breaks its schema: {problems[0].message}", internal=True
            )
    buffer = io.StringIO()
    writer = csv.DictWriter(buffer, fieldnames=csv_columns(), lineterminator="\n")
    writer.writeheader()
    writer.writerows(records)
    return buffer.getvalue()
