"""Which benchmark points also run an accuracy eval.

Default policy: only 8k1k points at concurrency >= 16. Single-node points are
grouped by (model, runner, framework, precision, isl, osl, spec-decoding,
dp-attn) and every point at the group's highest concurrency and at the upper
median of its distinct concurrencies runs an eval. A multi-node topology runs
one eval at its highest concurrency >= 16 (`eval-conc`). Agentic points run an
eval only under evals-only / all-evals: the highest concurrency per
(model, runner, framework, precision).
"""

from __future__ import annotations

import json
from collections import defaultdict
from collections.abc import Callable, Hashable, Iterable

from infx.matrix.expand import Row

EVAL_SEQ = (8192, 1024)
EVAL_MIN_CONC = 16
_SINGLE_GROUP = (
    "model",
    "runner",
    "framework",
    "precision",
    "isl",
    "osl",
    "spec-decoding",
    "dp-attn",
)
_AGENTIC_GROUP = ("model", "runner", "framework", "precision")


def _as_eval(row: Row, **extra: object) -> Row:
    out = {k: v for k, v in row.items() if k != "recipe-fingerprint"}
    out["run-eval"] = True
    out.update(extra)
    return out


def _group(rows: Iterable[Row], key: Callable[[Row], Hashable]) -> dict[Hashable, list[Row]]:
    groups: dict[Hashable, list[Row]] = defaultdict(list)
    for row in rows:
        groups[key(row)].append(row)
    return groups


def _eval_seq(row: Row) -> bool:
    return (row["isl"], row["osl"]) == EVAL_SEQ


def single_node_evals(rows: list[Row], all_evals: bool = False) -> list[Row]:
    if all_evals:
        return [_as_eval(r) for r in rows]
    candidates = [r for r in rows if _eval_seq(r) and r["conc"] >= EVAL_MIN_CONC]
    chosen = []
    for group in _group(candidates, lambda r: tuple(r[k] for k in _SINGLE_GROUP)).values():
        levels = sorted({r["conc"] for r in group})
        picks = {levels[-1], levels[len(levels) // 2]}
        chosen.extend(r for r in group if r["conc"] in picks)
    order = {id(r): i for i, r in enumerate(rows)}
    return [_as_eval(r) for r in sorted(chosen, key=lambda r: order[id(r)])]


def _topology_key(row: Row) -> Hashable:
    return (
        row["model"],
        row["runner"],
        row["framework"],
        row["precision"],
        row["isl"],
        row["osl"],
        row["spec-decoding"],
        json.dumps(row["prefill"], sort_keys=True),
        json.dumps(row["decode"], sort_keys=True),
    )


def multi_node_evals(rows: list[Row], all_evals: bool = False) -> list[Row]:
    if all_evals:
        return [_as_eval(r, **{"eval-conc": max(r["conc"])}) for r in rows]
    chosen = []
    for group in _group((r for r in rows if _eval_seq(r)), _topology_key).values():
        best = max(group, key=lambda r: max(r["conc"]))
        top = max(best["conc"])
        if top >= EVAL_MIN_CONC:
            chosen.append(_as_eval(best, **{"eval-conc": top}))
    return chosen


def agentic_evals(rows: list[Row]) -> list[Row]:
    """Highest-concurrency agentic point per (model, runner, framework, precision)."""

    def conc(row: Row) -> int:
        return max(row["conc"]) if isinstance(row["conc"], list) else row["conc"]

    chosen = []
    for group in _group(rows, lambda r: tuple(r[k] for k in _AGENTIC_GROUP)).values():
        top = max(conc(r) for r in group)
        chosen.extend(_as_eval(r) for r in group if conc(r) == top)
    return chosen
