"""Several runs of one PR head: pooled for the comparison, and priced when more are asked.

A PR's sweep may be run again (a repeat, or another attempt of the same run) to settle an
unconfirmed config: `infx results compare` takes every such table and judges their mean
(of logs, per point: the variance term is 1/R for R runs). Tables of different heads
measure different code and are refused.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import cast

from infx.errors import UsageError
from infx.matrix.cost import job_cost
from infx.matrix.rows import MatrixRow
from infx.results.table.rows import PointRecipe, Row, Table


def same_head(tables: Sequence[Table], names: Sequence[str]) -> None:
    """Refuse tables of different head commits (a table without one counts as unknown,
    and is refused next to tables that name one)."""
    heads = {str((t.get("run") or {}).get("sha") or "") for t in tables}
    if len(heads) > 1:
        named = ", ".join(
            f"{name} ({(t.get('run') or {}).get('sha') or 'no commit'})"
            for name, t in zip(names, tables, strict=True)
        )
        raise UsageError(f"these tables measured different commits, not repeats: {named}")


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
