"""Matrix rows as the workflows see them: job outputs per bucket, env vars, recipe paths."""

from __future__ import annotations

import json
import re
from typing import Any

from infx.errors import UsageError

_SAFE = re.compile(r"[^A-Za-z0-9._:/@+=,-]")


def bucket_outputs(payload: dict[str, Any]) -> dict[str, str]:
    """Compact JSON arrays per workflow bucket, plus has-<bucket> flags (a matrix cannot be empty)."""
    plan = payload.get("remaining", payload)
    if not isinstance(plan, dict) or "single_node" not in plan:
        raise UsageError("not a sweep plan or canary output")
    single = plan["single_node"]
    multi = plan["multi_node"]
    buckets = {
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
    out = {name: json.dumps(rows, separators=(",", ":")) for name, rows in buckets.items()}
    out.update({f"has-{name}": str(bool(rows)).lower() for name, rows in buckets.items()})
    out["changelog-metadata"] = json.dumps(
        plan.get("changelog_metadata", {}), separators=(",", ":")
    )
    return out


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
