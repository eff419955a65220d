"""Which benchmark points also run an accuracy eval.

Selection works on the rows of one planning pass (one changelog entry's configs
that share a scenario set), so groups span configs:

- single-node fixed-seq-len: 8k1k rows at concurrency >= 16, grouped by (model,
  runner, framework, precision, isl, osl, spec-decoding, dp-attn); every row at the
  group's highest and upper-median distinct concurrency;
- multi-node (fixed-seq-len 8k1k, and agentic): per topology (the row without its
  point and eval fields), the row holding the highest concurrency >= 16, with
  `eval-conc` set to it;
- single-node agentic: per (model, runner, framework, precision), the first row
  with the highest concurrency.

`all-evals` widens that: every single-node 8k1k and agentic row; multi-node 8k1k
rows of one topology merged into one row running all their concurrencies; multi-
node agentic rows of one topology merged, evaluated at the highest.

Formats with vendor evals (`infx.formats.Format.vendor_evals`) evaluate every agentic row
of those models with the vendor's suite, one eval row per point, and keep them out of the
groups above; formats that name an eval's framework and suite print them on every eval
row (`lm-eval` with an empty suite for the rest).
"""

from __future__ import annotations

import json
from collections.abc import Hashable, Iterable
from typing import Any

from infx.formats import PR2707, Format
from infx.matrix.expand import RawRow, is_agentic, is_multinode, row_concs

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
_NOT_TOPOLOGY = frozenset(
    {
        "conc",
        "run-eval",
        "eval-only",
        "eval-conc",
        "eval-all-concs",
        "exp-name",
        "eval-framework",
        "eval-suite",
    }
)


def _eligible(row: RawRow) -> list[int]:
    return sorted(c for c in row_concs(row) if c >= EVAL_MIN_CONC)


def _is_eval_seq(row: RawRow) -> bool:
    return (row.get("isl"), row.get("osl")) == EVAL_SEQ


def topology(row: RawRow) -> Hashable:
    """A multi-node row's identity without concurrency, name and eval fields."""
    return json.dumps(
        {k: v for k, v in row.items() if k not in _NOT_TOPOLOGY}, sort_keys=True, default=str
    )


def _first_highest(items: Iterable[tuple[int, int]]) -> tuple[int, int]:
    """(index, conc) with the highest conc; the earliest row wins a tie."""
    best: tuple[int, int] | None = None
    for item in items:
        if best is None or item[1] > best[1]:
            best = item
    assert best is not None
    return best


def vendor_eval(row: RawRow, fmt: Format) -> tuple[str, str] | None:
    """The (framework, suite) that evaluates every point of this agentic row's model."""
    if not is_agentic(row):
        return None
    return fmt.vendor_evals.get(str(row.get("model-prefix")))


def mark(rows: list[RawRow], fmt: Format = PR2707) -> None:
    """Set `run-eval` on every row (and `eval-conc` on chosen multi-node rows, the eval
    framework and suite where the format names them), in place."""
    chosen: set[int] = set()
    eval_conc: dict[int, int] = {}
    vendor: dict[int, tuple[str, str]] = {}
    single: dict[Hashable, list[int]] = {}
    multi: dict[Hashable, list[tuple[int, int]]] = {}
    agentic: dict[Hashable, list[tuple[int, int]]] = {}
    for i, row in enumerate(rows):
        suite = vendor_eval(row, fmt)
        if suite is not None:
            vendor[i] = suite
            chosen.add(i)
            if is_multinode(row):
                eval_conc[i] = max(row_concs(row))
        elif is_agentic(row):
            if is_multinode(row):
                eligible = _eligible(row)
                if eligible:
                    multi.setdefault(("agentic", topology(row)), []).append((i, eligible[-1]))
            else:
                key = tuple(row[k] for k in _AGENTIC_GROUP)
                agentic.setdefault(key, []).append((i, max(row_concs(row))))
        elif _is_eval_seq(row) and _eligible(row):
            if is_multinode(row):
                multi.setdefault(("fixed", topology(row)), []).append((i, _eligible(row)[-1]))
            else:
                single.setdefault(tuple(row[k] for k in _SINGLE_GROUP), []).append(i)
    for members in single.values():
        levels = sorted({rows[i]["conc"] for i in members})
        picks = {levels[-1], levels[len(levels) // 2]}
        chosen.update(i for i in members if rows[i]["conc"] in picks)
    for items in multi.values():
        index, conc = _first_highest(items)
        chosen.add(index)
        eval_conc[index] = conc
    for items in agentic.values():
        chosen.add(_first_highest(items)[0])
    for i, row in enumerate(rows):
        row["run-eval"] = i in chosen
        if i in chosen:
            _tag(row, fmt, vendor.get(i))
        if i in eval_conc:
            row["eval-conc"] = eval_conc[i]


def _tag(row: RawRow, fmt: Format, suite: tuple[str, str] | None) -> None:
    """The eval's framework and suite, where the format prints them."""
    if fmt.eval_framework is None:
        return
    framework, name = suite or (fmt.eval_framework, "")
    row["eval-framework"] = framework
    row["eval-suite"] = name


def widen(rows: list[RawRow], fmt: Format = PR2707) -> list[RawRow]:
    """The all-evals selection over rows already `mark`ed."""
    out: list[RawRow] = []
    merged: dict[Hashable, RawRow] = {}
    for row in rows:
        suite = vendor_eval(row, fmt)
        if suite is not None:
            one: RawRow = {**row, "run-eval": True}
            _tag(one, fmt, suite)
            if is_multinode(row):
                one["conc"] = sorted(set(row_concs(row)))
                one["eval-conc"] = max(one["conc"])
            out.append(one)
        elif is_agentic(row) and not is_multinode(row):
            out.append({**row, "run-eval": True})
        elif is_agentic(row) or (is_multinode(row) and _is_eval_seq(row)):
            key = (is_agentic(row), topology(row))
            if key in merged:
                into = merged[key]
                into["conc"] = sorted(set(into["conc"]) | set(row_concs(row)))
                if is_agentic(row):
                    into["eval-conc"] = max(into["conc"])
                continue
            first: RawRow = {**row, "conc": sorted(set(row_concs(row))), "run-eval": True}
            if is_agentic(row):
                first["eval-conc"] = max(first["conc"])
            else:
                first["eval-all-concs"] = True
                first.pop("eval-conc", None)
            merged[key] = first
            out.append(first)
        elif _is_eval_seq(row):
            out.append({**row, "run-eval": True})
        else:
            out.append(row)
    for row in out:
        if row.get("run-eval") and "eval-framework" not in row:
            _tag(row, fmt, None)
    return out


def eval_rows(rows: list[RawRow], all_evals: bool, fmt: Format = PR2707) -> list[RawRow]:
    """The eval rows of one planning pass, marked `eval-only`; an eval never has to measure
    power, so `require-power` is left off them."""
    rows = [dict(r) for r in rows]
    mark(rows, fmt)
    if all_evals:
        rows = widen(rows, fmt)
    chosen = [{**r, "eval-only": True} for r in rows if r.get("run-eval")]
    for row in chosen:
        row.pop("require-power", None)
    return chosen


def drop_below_prefill_ep(rows: list[RawRow], minimum: int | None) -> list[RawRow]:
    """`eval-min-prefill-ep`: multi-node eval rows whose prefill ep is below it are dropped."""
    if minimum is None:
        return rows
    kept = []
    for row in rows:
        prefill: Any = row.get("prefill")
        if isinstance(prefill, dict):
            ep = prefill.get("ep", 1)
            if not isinstance(ep, int) or ep < minimum:
                continue
        kept.append(row)
    return kept
