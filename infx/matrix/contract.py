"""The row contract the workflows read: field order, defaults, and what is left out.

The planner works on raw rows (`infx.matrix.expand`); this module turns each into
the printed form, field for field as InferenceX's planner of a format's era prints it
(`infx.formats`): a fixed order per row shape, `eval-only` and `eval-all-concs` filled
in where the shape has them, worker blocks complete, and absent or null optional fields
omitted.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, cast

from infx.formats import PR2707, Format
from infx.matrix.expand import RawRow, is_agentic, is_multinode
from infx.matrix.rows import MatrixRow, PlanEntry

_COMPONENT = ("name", "version")
_NESTED = {"router": _COMPONENT, "kv-offload-backend": _COMPONENT}


def kind(row: Mapping[str, Any]) -> str:
    """single_fixed, multi_fixed, single_agentic or multi_agentic (`infx.formats.Shapes`)."""
    node = "multi" if is_multinode(row) else "single"
    return f"{node}_{'agentic' if is_agentic(row) else 'fixed'}"


def shape(row: Mapping[str, Any], fmt: Format = PR2707) -> tuple[str, ...]:
    """The printed field order of this row in `fmt`."""
    found: tuple[str, ...] = getattr(fmt.shapes, kind(row))
    return found


def _ordered(
    data: Mapping[str, Any], order: tuple[str, ...], defaults: Mapping[str, Any]
) -> dict[str, Any]:
    out = {}
    for key in order:
        value = data.get(key, defaults.get(key))
        if value is not None:
            out[key] = list(value) if isinstance(value, list) and key not in data else value
    return out


def printed(row: RawRow, fmt: Format = PR2707) -> MatrixRow:
    """A raw or eval-marked row in its printed form in `fmt`: where a generated row becomes
    a `MatrixRow` (`infx.matrix.pipeline` checks every plan against the schema)."""
    shapes = fmt.shapes
    out = _ordered(row, shape(row, fmt), shapes.defaults[kind(row)])
    for key in ("prefill", "decode"):
        if key in out:
            out[key] = _ordered(out[key], shapes.worker, shapes.worker_defaults)
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


def printed_entry(entry: Mapping[str, Any], fmt: Format = PR2707) -> PlanEntry:
    """A changelog entry as the plan's `changelog_metadata` records it in `fmt`: its flags
    filled in as false."""
    flags = dict.fromkeys(fmt.entry_flags, False)
    return cast(PlanEntry, _ordered(entry, fmt.entry_fields, flags))
