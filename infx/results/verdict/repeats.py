"""Several runs of one PR head: pooled for the comparison, and priced when more are asked.

A PR's sweep may be run again (a repeat) to settle an unconfirmed config: `infx results
compare` takes every such table and pools them robustly (`infx.results.noise.pool`: the
variance term is 1/R for R runs). Only independent runs of one head may be pooled: tables of
different heads measure different code, and one run counted twice (the same run id, the
same table, a point with the very same values: another attempt carries the points it did
not measure again) would shrink the band by sqrt(2) for nothing. Both are refused.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import cast

from infx.errors import UsageError
from infx.matrix.cost import job_cost
from infx.matrix.rows import MatrixRow
from infx.results.table.frame import Frame
from infx.results.table.keys import config_label, folded_key, variant
from infx.results.table.metrics import NUMBERS
from infx.results.table.rows import PointRecipe, Row, Table


def same_head(tables: Sequence[Table], names: Sequence[str]) -> None:
    """Refuse tables of different head commits (a table without one counts as unknown,
    and is refused next to tables that name one), one run given twice, and a table that
    measured one point twice."""
    for name, table in zip(names, tables, strict=True):
        once_each(table, name)
    heads = {str((t.get("run") or {}).get("sha") or "") for t in tables}
    if len(heads) > 1:
        named = ", ".join(
            f"{name} ({(t.get('run') or {}).get('sha') or 'no commit'})"
            for name, t in zip(names, tables, strict=True)
        )
        raise UsageError(f"these tables measured different commits, not repeats: {named}")
    distinct(tables, names)


def pairs(
    mine: Sequence[Table], mine_names: Sequence[str],
    beside: Sequence[Table], names: Sequence[str],
) -> None:  # fmt: skip
    """Refuse main's runs beside this PR's unless each has a run of this PR to pair with
    (the newest len(beside) of them, in order), they are of one head, and no run is given
    twice on either side. The two sides are refused apart: a paired repeat's two halves are
    one workflow run (one run id) and two measurements, not one run given twice."""
    if not beside or len(beside) > len(mine):
        raise UsageError(
            f"--baseline-repeat: {len(beside)} table(s) for {len(mine)} run(s) of this PR: "
            "one run of main's image beside each of this PR's newest runs, in the same order"
        )
    same_head(beside, names)
    distinct(mine, mine_names)
    ours = {_point(row): name for t, name in zip(mine, mine_names, strict=True)
            for row in t.get("rows", []) if row.get("kind") == "throughput"}  # fmt: skip
    for table, name in zip(beside, names, strict=True):
        for row in table.get("rows", []):
            if row.get("kind") == "throughput" and _point(row) in ours:
                raise UsageError(
                    f"{name} and {ours[_point(row)]} hold the same measurement (a point with "
                    "the very same numbers): main's run beside this PR's is another "
                    "measurement, not a copy of it"
                )


_TPUT, _TPOT = NUMBERS.index("tput_per_gpu"), NUMBERS.index("median_tpot")


def not_mains(tables: Sequence[Table], names: Sequence[str], history: Frame) -> None:
    """Refuse a table of this PR's (or of main's image beside it) holding a throughput
    point with the very same throughput and TPOT p50 as a point of main's history: a
    copy of main's run, not a run of this head (two copies of main's newest runs given as
    repeats pooled a 15 % regression into within noise). Main's own run, judged against
    its history, has been left out of it before."""
    values = history.values[:, [_TPUT, _TPOT]]
    seen = {(a, b): i for i, (a, b) in enumerate(values.tolist()) if a == a and b == b}
    for name, table in zip(names, tables, strict=True):
        for row in table.get("rows", []):
            m = row.get("metrics") or {}
            found = seen.get((m.get("tput_per_gpu"), m.get("median_tpot")))
            if row.get("kind") == "throughput" and found is not None:
                run = history.runs[int(history.run[found])].get("id")
                raise UsageError(
                    f"{name} holds a point with the very same numbers as main's run {run} "
                    f"(conc {row['identity']['conc']} of {config_label(row['identity'])}): "
                    "a copy of main's run, not a run of this PR"
                )


def once_each(table: Table, name: str) -> None:
    """Refuse a table that holds one point twice, as the comparison matches points (kind,
    config with names folded, master config, concurrency): only one of the two rows
    could be judged, and the table's author would choose which (the ingest refuses such a
    table of main's for the same reason)."""
    seen: dict[tuple[str, str, object], int] = {}
    for index, row in enumerate(table.get("rows", [])):
        kind, identity = row["kind"], row["identity"]
        key = (folded_key(kind, identity), variant(row), identity.get("conc"))
        if key in seen:
            raise UsageError(
                f"{name}: rows {seen[key]} and {index} measure one point twice ({kind}, "
                f"conc {identity.get('conc')} of {config_label(identity)}): a table holds "
                "each point once"
            )
        seen[key] = index


def _point(row: Row) -> str:
    """A measured point as text: what it is and every number it holds."""
    kept = {k: row.get(k) for k in ("kind", "identity", "metrics", "accuracy")}
    return json.dumps(kept, sort_keys=True, default=str)


def distinct(tables: Sequence[Table], names: Sequence[str]) -> None:
    """Refuse a run given twice: two tables of one run id, or any throughput point measured
    with the very same numbers in two tables (no two runs measure a throughput to every
    digit; a greedy eval may well score the same twice, so accuracy rows are not evidence)."""
    if len(tables) < 2:
        return
    ids: dict[int, str] = {}
    seen: dict[str, str] = {}
    for name, table in zip(names, tables, strict=True):
        run_id = (table.get("run") or {}).get("id")
        if isinstance(run_id, int) and not isinstance(run_id, bool):
            if run_id in ids:
                raise UsageError(
                    f"{ids[run_id]} and {name} are one run ({run_id}), not repeats: a repeat "
                    "is another run of the same head"
                )
            ids[run_id] = name
        mine = {_point(row) for row in table.get("rows", []) if row.get("kind") == "throughput"}
        for point in sorted(mine):
            if point in seen:
                raise UsageError(
                    f"{seen[point]} and {name} hold the same measurement (a point with the "
                    "very same numbers), not repeats: pool independent runs only"
                )
        seen.update(dict.fromkeys(mine, name))


def matrix_row(row: Row) -> MatrixRow:
    """A result row as the matrix row that would measure it again (for its cost; the
    fields a row lacks make job_cost raise, and the row is left out of the price)."""
    out: dict[str, object] = {**row.get("identity", {}), **row.get("recipe", {})}
    out["scenario-type"] = out.pop("scenario", "fixed-seq-len")
    out["run-eval"] = row.get("kind") == "accuracy"
    return cast(MatrixRow, out)


def price(rows: Sequence[Row], count: int) -> tuple[float, str]:
    """GPU-hours of `count` more runs of these rows (infx.matrix.cost, no recorded
    timings: its assumption per point), and how the minutes were estimated."""
    costs = []
    for row in rows:
        try:
            costs.append(job_cost(matrix_row(row), row.get("kind") == "accuracy", {}))
        except (KeyError, TypeError, ValueError):
            continue
    hours = sum(c.gpu_hours for c in costs) * count
    sources = sorted({c.source for c in costs})
    return hours, "; ".join(sources) if sources else "no estimate"


def identity_rows(rows: Sequence[Row]) -> tuple[PointRecipe, ...]:
    """What a workflow needs to dispatch the runs: each point's identity and recipe."""
    return tuple(PointRecipe(identity=row["identity"], recipe=row["recipe"]) for row in rows)
