"""The row contract the workflows read: field order, defaults, and what is left out.

The planner works on raw rows (`infx.matrix.expand`); this module turns each into
the printed form, field for field as InferenceX's planner prints it: a fixed
order per row shape, `eval-only` and `eval-all-concs` filled in where the shape
has them, worker blocks complete, and absent or null optional fields omitted.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, cast

from infx.matrix.expand import RawRow, is_agentic, is_multinode
from infx.matrix.rows import MatrixRow, PlanEntry

_HEAD = ("image", "model", "model-prefix", "precision", "framework")
_PARALLEL = ("tp", "pp", "dcp-size", "pcp-size", "ep", "dp-attn")

_FIXED_HEAD = (*_HEAD, "spec-decoding", "runner", "isl", "osl")
_FIXED_POINT = ("conc", "max-model-len", "exp-name", "disagg", "run-eval", "eval-only")

SINGLE_FIXED = (*_FIXED_HEAD, *_PARALLEL, *_FIXED_POINT, "router", "recipe-fingerprint")
MULTI_FIXED = (
    *_FIXED_HEAD,
    "prefill",
    "decode",
    *_FIXED_POINT,
    "eval-conc",
    "eval-all-concs",
    "router",
    "kv-p2p-transfer",
    "recipe-fingerprint",
)
SINGLE_AGENTIC = (
    *_HEAD,
    "runner",
    *_PARALLEL,
    "spec-decoding",
    "conc",
    "kv-offloading",
    "kv-offload-backend",
    "router",
    "total-cpu-dram-gb",
    "duration",
    "exp-name",
    "scenario-type",
    "run-eval",
    "eval-only",
    "recipe-fingerprint",
)
MULTI_AGENTIC = (
    *_HEAD,
    "spec-decoding",
    "runner",
    "prefill",
    "decode",
    "conc",
    "kv-offloading",
    "kv-offload-backend",
    "router",
    "kv-p2p-transfer",
    "total-cpu-dram-gb",
    "duration",
    "exp-name",
    "disagg",
    "scenario-type",
    "run-eval",
    "eval-only",
    "eval-conc",
    "recipe-fingerprint",
)
WORKER = (
    "num-worker",
    "tp",
    "pp",
    "dcp-size",
    "pcp-size",
    "ep",
    "dp-attn",
    "hardware",
    "additional-settings",
)
_COMPONENT = ("name", "version")
_NESTED = {"router": _COMPONENT, "kv-offload-backend": _COMPONENT}

_DEFAULTS: dict[tuple[str, ...], dict[str, Any]] = {
    SINGLE_FIXED: {"eval-only": False},
    MULTI_FIXED: {"eval-only": False, "eval-all-concs": False},
    SINGLE_AGENTIC: {},
    MULTI_AGENTIC: {},
}

ENTRY_FIELDS = (
    "config-keys",
    "description",
    "pr-link",
    "evals-only",
    "all-evals",
    "append-only",
    "eval-min-prefill-ep",
    "scenario-type",
)
_ENTRY_DEFAULTS = {"evals-only": False, "all-evals": False, "append-only": False}


def shape(row: Mapping[str, Any]) -> tuple[str, ...]:
    if is_agentic(row):
        return MULTI_AGENTIC if is_multinode(row) else SINGLE_AGENTIC
    return MULTI_FIXED if is_multinode(row) else SINGLE_FIXED


def _ordered(
    data: Mapping[str, Any], order: tuple[str, ...], defaults: Mapping[str, Any]
) -> dict[str, Any]:
    out = {}
    for key in order:
        value = data.get(key, defaults.get(key))
        if value is not None:
            out[key] = value
    return out


def _worker(block: Mapping[str, Any]) -> dict[str, Any]:
    return _ordered(block, WORKER, {"additional-settings": []})


def printed(row: RawRow) -> MatrixRow:
    """A raw or eval-marked row in its printed form: where a generated row becomes a
    `MatrixRow` (`infx.matrix.pipeline` checks every plan against the schema)."""
    order = shape(row)
    out = _ordered(row, order, _DEFAULTS[order])
    for key in ("prefill", "decode"):
        if key in out:
            out[key] = _worker(out[key])
    for key, fields in _NESTED.items():
        if isinstance(out.get(key), Mapping):
            out[key] = _ordered(out[key], fields, {})
    return cast(MatrixRow, out)


def worker_gpus(block: Mapping[str, Any]) -> int:
    return int(block["num-worker"] * block["tp"] * block.get("pp", 1) * block.get("pcp-size", 1))


def row_gpus(row: Mapping[str, Any]) -> dict[str, int]:
    """GPUs a job holds. Single node: tp * pp * pcp-size. Multi-node: per role, workers x
    tp x pp x pcp-size, and their total."""
    if is_multinode(row):
        prefill, decode = worker_gpus(row["prefill"]), worker_gpus(row["decode"])
        return {"total": prefill + decode, "prefill": prefill, "decode": decode}
    return {"total": int(row["tp"] * row.get("pp", 1) * row.get("pcp-size", 1))}


def printed_entry(entry: Mapping[str, Any]) -> PlanEntry:
    """A changelog entry as the plan's `changelog_metadata` records it: defaults filled in."""
    return cast(PlanEntry, _ordered(entry, ENTRY_FIELDS, _ENTRY_DEFAULTS))
