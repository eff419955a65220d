"""Main's history as numbers: what a comparison reads of main's runs, one array per column
instead of one row per point.

A **series** is what a config's points share in one run: kind, identity (without the
concurrency), the master config that measured them (`variant`) and the image. A **frame**
is main's runs (oldest first), their series, and one entry per stored point: its run, its
series, its concurrency and its `NUMBERS` (NaN where the row has none). The history
database reads one from columns (`infx.history.frames`); a folder of tables or the API's
tables become one with `of_documents`. Rows are kept only where the numbers are not the
whole point (accuracy scores) or where the frame was made of documents, whose rows are
shown as they were; any other point's row is rebuilt from its numbers when shown.
Pure: values in, values out.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from functools import cached_property
from typing import Any, cast

import numpy as np

from infx.results.table.keys import Measured, config_key
from infx.results.table.metrics import NUMBERS
from infx.results.table.rows import Identity, Recipe, Row, RunInfo, Table, config_identity, run_of


@dataclass(frozen=True)
class Series:
    kind: str
    identity: Identity  # without conc
    variant: str  # the master config that measured it; "" or "image:..." when unknown
    image: str

    @property
    def measured_by(self) -> str:
        """Which master config measured it, as `keys.variant` says of a row: its config
        key, else its image."""
        if self.variant and not self.variant.startswith("image:"):
            return self.variant
        return f"image:{self.image}"


def _empty(dtype: Any, *shape: int) -> np.ndarray:
    return np.zeros((0, *shape), dtype=dtype)


@dataclass(frozen=True)
class Frame:
    """Main's runs, oldest first, as series and points (see the module's docstring).
    Points are in the order their tables list them (per run: kind, config, concurrency,
    variant): where two points of a run are matched as one, the first is kept."""

    runs: tuple[RunInfo, ...] = ()  # each run's `run` object
    series: tuple[Series, ...] = ()
    run: np.ndarray = field(default_factory=lambda: _empty(np.int64))  # index into runs
    of: np.ndarray = field(default_factory=lambda: _empty(np.int64))  # index into series
    conc: np.ndarray = field(default_factory=lambda: _empty(np.int64))
    values: np.ndarray = field(default_factory=lambda: _empty(float, len(NUMBERS)))
    rows: Mapping[int, Row] = field(default_factory=dict)  # point -> its row

    def __len__(self) -> int:
        return len(self.runs)

    def row(self, point: int) -> Row:
        """The point as a results row: its own, else rebuilt from its numbers (kind,
        identity, recipe image and master config, metrics: what a verdict reads of main's
        rows; their client and GPUs are not read back)."""
        found = self.rows.get(point)
        if found is not None:
            return found
        series = self.series[int(self.of[point])]
        recipe = cast(Recipe, {"image": series.image})  # its exp-name is not read back
        if series.variant and not series.variant.startswith("image:"):
            recipe["config-key"] = series.variant
        metrics = {
            name: value
            for name, value in zip(NUMBERS, self.values[point].tolist(), strict=True)
            if not math.isnan(value)
        }
        identity = series.identity.copy()
        identity["conc"] = int(self.conc[point])
        rebuilt = {"kind": series.kind, "identity": identity, "recipe": recipe, "metrics": metrics}
        return cast(Row, rebuilt)

    @cached_property
    def held(self) -> list[list[int]]:
        """Per run, the series it holds points of, in the order of their first point."""
        if not len(self.run):
            return [[] for _ in self.runs]
        pairs = self.run * max(len(self.series), 1) + self.of
        _, first = np.unique(pairs, return_index=True)
        out: list[list[int]] = [[] for _ in self.runs]
        for point in np.sort(first).tolist():
            out[int(self.run[point])].append(int(self.of[point]))
        return out

    def measured(self) -> list[list[Measured]]:
        """Per run, what it measured (`keys.matched`): one entry per series it holds."""
        out = []
        for series in self.held:
            found = (self.series[s] for s in series)
            out.append([(f.kind, f.identity, f.measured_by, f.image) for f in found])
        return out

    def without_runs(self, ids: set[int]) -> Frame:
        """The frame less the runs whose `id` is in `ids`."""
        keep = [i for i, run in enumerate(self.runs) if run.get("id") not in ids]
        if len(keep) == len(self.runs):
            return self
        renumber = np.full(len(self.runs), -1, dtype=np.int64)
        renumber[keep] = np.arange(len(keep))
        kept = np.flatnonzero(renumber[self.run] >= 0) if len(self.run) else self.run
        old = {int(p): n for n, p in enumerate(kept.tolist())}
        return Frame(
            runs=tuple(self.runs[i] for i in keep),
            series=self.series,
            run=renumber[self.run[kept]],
            of=self.of[kept],
            conc=self.conc[kept],
            values=self.values[kept],
            rows={old[p]: row for p, row in self.rows.items() if p in old},
        )


def numbers(row: Row) -> list[float]:
    """A row's NUMBERS, NaN where absent (the schema has checked they are numbers)."""
    metrics = row.get("metrics")
    if metrics is None:
        return [math.nan] * len(NUMBERS)
    out = []
    for name in NUMBERS:
        value = metrics.get(name)
        if isinstance(value, int | float) and not isinstance(value, bool):
            out.append(float(value))
        else:
            out.append(math.nan)
    return out


def of_documents(docs: Sequence[Table]) -> Frame:
    """Results documents (main's runs, oldest first) as a frame that keeps their rows."""
    series: list[Series] = []
    index: dict[tuple[str, str, str, str], int] = {}
    run: list[int] = []
    of: list[int] = []
    conc: list[int] = []
    values: list[list[float]] = []
    rows: dict[int, Row] = {}
    for i, doc in enumerate(docs):
        for row in doc.get("rows", []):
            recipe = row["recipe"]
            variant = str(recipe.get("config-key") or "")
            image = str(recipe.get("image", ""))
            found = (row["kind"], config_key(row["identity"]), variant, image)
            s = index.get(found)
            if s is None:
                s = index[found] = len(series)
                series.append(Series(row["kind"], config_identity(row["identity"]), variant, image))
            rows[len(run)] = row
            run.append(i)
            of.append(s)
            conc.append(row["identity"]["conc"])
            values.append(numbers(row))
    return Frame(
        runs=tuple(run_of(doc) for doc in docs),
        series=tuple(series),
        run=np.array(run, dtype=np.int64),
        of=np.array(of, dtype=np.int64),
        conc=np.array(conc, dtype=np.int64),
        values=np.array(values, dtype=float).reshape(len(run), len(NUMBERS)),
        rows=rows,
    )


def documents_of(frame: Frame) -> Iterable[list[Row]]:
    """Each run's rows, rebuilt (for callers that still read rows)."""
    out: list[list[Row]] = [[] for _ in frame.runs]
    for point, i in enumerate(frame.run.tolist()):
        out[i].append(frame.row(point))
    return out
