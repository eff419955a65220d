"""Matrix rows as the workflows see them: job outputs per bucket, env vars, recipe paths."""

from __future__ import annotations

import json
import re
from typing import Any

from infx.errors import UsageError

Row = dict[str, Any]
_SAFE = re.compile(r"[^A-Za-z0-9._:/@+=,-]")


# GitHub refuses a matrix of more than 256 jobs.
MATRIX_LIMIT = 256
# A job's outputs may total 1 MB, counted as UTF-16; a chunk's rows travel as one output,
# so a chunk stays below this with room for the job's other outputs.
OUTPUT_BUDGET = 900_000


# The plan's job families, one benchmark job of the sweep workflow each.
BUCKETS = (
    "canary",
    "single",
    "agentic",
    "multi",
    "multi-agentic",
    "evals",
    "agentic-evals",
    "multinode-evals",
    "multinode-agentic-evals",
)


def buckets(payload: dict[str, Any]) -> dict[str, list[Row]]:
    """The rows of each workflow job family (one matrix job per bucket) of a plan or `canary` output."""
    plan = payload.get("remaining", payload)
    if not isinstance(plan, dict) or "single_node" not in plan:
        raise UsageError("not a sweep plan or canary output")
    single = plan["single_node"]
    multi = plan["multi_node"]
    return {
        "canary": payload.get("canary", []),
        "single": [r for name, rows in single.items() if name != "agentic" for r in rows],
        "agentic": single.get("agentic", []),
        "multi": [r for name, rows in multi.items() if name != "agentic" for r in rows],
        "multi-agentic": multi.get("agentic", []),
        "evals": plan["evals"],
        "agentic-evals": plan["agentic_evals"],
        "multinode-evals": plan["multinode_evals"],
        "multinode-agentic-evals": plan["multinode_agentic_evals"],
    }


def _compact(value: Any) -> str:
    return json.dumps(value, separators=(",", ":"))


def output_size(text: str) -> int:
    """Bytes GitHub counts against the output limit (UTF-16)."""
    return len(text.encode("utf-16-le"))


def chunks(rows: list[Row]) -> list[list[Row]]:
    """Consecutive runs of rows, each small enough for one matrix and one job output."""
    result: list[list[Row]] = []
    current: list[Row] = []
    size = 2
    for row in rows:
        cost = output_size(_compact(row)) + 2
        if cost + 2 > OUTPUT_BUDGET:
            raise UsageError(f"matrix row {row.get('exp-name', '?')} is too large for a job output")
        if current and (len(current) == MATRIX_LIMIT or size + cost > OUTPUT_BUDGET):
            result.append(current)
            current, size = [], 2
        current.append(row)
        size += cost
    if current:
        result.append(current)
    return result


def bucket_outputs(payload: dict[str, Any]) -> dict[str, str]:
    """Per bucket, the list of its chunk indices (the outer matrix) and a has-<bucket> flag
    (a matrix cannot be empty). The rows themselves stay in the plan file: a full plan is
    larger than a job's outputs may be."""
    out: dict[str, str] = {}
    for name, rows in buckets(payload).items():
        out[name] = _compact(list(range(len(chunks(rows)))))
        out[f"has-{name}"] = str(bool(rows)).lower()
    plan = payload.get("remaining", payload)
    out["changelog-metadata"] = _compact(plan.get("changelog_metadata", {}))
    return out


def chunk_rows(payload: dict[str, Any], bucket: str, index: int) -> list[Row]:
    """The rows of one chunk of a bucket, as `bucket_outputs` numbered them."""
    all_buckets = buckets(payload)
    if bucket not in all_buckets:
        raise UsageError(f"no bucket {bucket!r}; buckets: {', '.join(all_buckets)}")
    parts = chunks(all_buckets[bucket])
    if not 0 <= index < len(parts):
        raise UsageError(f"bucket {bucket!r} has {len(parts)} chunk(s); no chunk {index}")
    return parts[index]


def _env_value(value: Any) -> str:
    text = value if isinstance(value, str) else json.dumps(value, separators=(",", ":"))
    if "\n" in text or "\r" in text:
        raise UsageError("matrix row values may not contain newlines")
    return text


def row_env(row: dict[str, Any]) -> dict[str, str]:
    """`exp-name` -> EXP_NAME=...; lists and objects as compact JSON."""
    return {key.upper().replace("-", "_"): _env_value(value) for key, value in row.items()}


def gpu_type(runner_name: str, label: str) -> str:
    """`mi355x-amds_03` -> `mi355x`: the node name before its `_NN` suffix, up to the first dash.
    Without a node name (dry runs), the label stands in (`cluster:mi355x-amds` -> `mi355x`)."""
    name = runner_name or label.removeprefix("cluster:")
    name = re.sub(r"_\d+$", "", name)
    return name.split("-", 1)[0]


def recipe_path(row: dict[str, Any], runner_name: str) -> str:
    """recipes/<model-prefix>_<precision>_<gpu>_<framework>[_agentic].sh"""
    parts = [
        row["model-prefix"],
        row["precision"],
        gpu_type(runner_name, row["runner"]),
        row["framework"],
    ]
    suffix = "_agentic" if row.get("scenario-type") == "agentic-coding" else ""
    name = "_".join(_SAFE.sub("", str(p)).replace("/", "") for p in parts)
    return f"recipes/{name}{suffix}.sh"
