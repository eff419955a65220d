"""Main's history as series: its runs indexed once, each point's metrics over the runs that
measured it (on a log scale), and each series' level, cut at its own change points and at
its config's joint ones."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from infx.results import noise
from infx.results.compare import CHECKS, family_key, index, interactivity


@dataclass
class History:
    """Main's runs indexed once: per run (oldest first), (kind|config) -> conc -> row."""

    runs: list[dict[str, Any]]
    points: list[dict[str, dict[int, dict[str, Any]]]]
    families: list[dict[str, list[str]]]

    @classmethod
    def of(
        cls,
        docs: Sequence[dict[str, Any]],
        notes: list[str] | None = None,
        names: dict[str, str] | None = None,
    ) -> History:
        names = {} if names is None else names
        runs, points, families = [], [], []
        for doc in docs:
            indexed = index(doc.get("rows", []), notes, "main", twice=False, names=names)
            runs.append(dict(doc.get("run") or {}))
            points.append(indexed)
            fam: dict[str, list[str]] = {}
            for key, by_conc in indexed.items():
                row = next(iter(by_conc.values()))
                fam.setdefault(family_key(row["kind"], row["identity"]), []).append(key)
            families.append(fam)
        return cls(runs, points, families)

    def holding(self, key: str) -> list[int]:
        return [i for i, p in enumerate(self.points) if key in p]


def positive(row: dict[str, Any], key: str) -> float | None:
    value = row.get("metrics", {}).get(key)
    return value if isinstance(value, int | float) and value > 0 else None


def measured(row: dict[str, Any], key: str) -> float | None:
    """The PR's value as judged: 0 too (a throughput of 0 is a regression, not n/a)."""
    value = row.get("metrics", {}).get(key)
    return value if isinstance(value, int | float) and value >= 0 else None


METRICS = (*(c.key for c in CHECKS), "intvty")
CURVE_METRICS = ("tput_per_gpu", "intvty")  # the series main's Pareto curve is drawn from


def point_series(
    history: History, runs: list[int], key: str, conc: int
) -> dict[str, tuple[np.ndarray, list[int]]]:
    """Each metric's log values over the runs that measured the point, and their positions
    in `runs` (one pass over the runs for every metric)."""
    found: dict[str, tuple[list[float], list[int]]] = {m: ([], []) for m in METRICS}
    for pos, i in enumerate(runs):
        row = history.points[i][key].get(conc)
        if row is None:
            continue
        metrics = row.get("metrics", {})
        for metric in METRICS:
            v = interactivity(metrics) if metric == "intvty" else metrics.get(metric)
            if isinstance(v, int | float) and v > 0:
                values, where = found[metric]
                values.append(v)
                where.append(pos)
    return {m: (noise.logs(v), w) for m, (v, w) in found.items() if v}


def levels(
    series: list[np.ndarray], where: list[list[int]], pending: list[Pending]
) -> list[noise.Level]:
    """Each series' level, cut at its own change points and at its config's joint ones."""
    own = noise.break_points(series)
    merged = [set(b) for b in own]
    for job in pending:
        slots = [i for (_, m), i in job.slots.items() if m != "intvty"]
        complete = [i for i in slots if len(where[i]) == len(job.runs)]
        job.joint = noise.joint_breaks([series[i] for i in complete]) if complete else ()
        for i in job.slots.values():
            merged[i] |= mapped(job.joint, where[i])
    return [noise.level(x, tuple(sorted(m))) for x, m in zip(series, merged, strict=True)]


def mapped(breaks: tuple[int, ...], where: list[int]) -> set[int]:
    """Change points at run positions, as indexes into a series measured at `where`."""
    out = set()
    for b in breaks:
        position = next((p for p, run in enumerate(where) if run >= b), None)
        if position:
            out.add(position)
    return out


@dataclass
class Pending:
    """A throughput config under way: its series are estimated for all configs at once."""

    key: str
    identity: dict[str, Any]
    mine: dict[int, dict[str, Any]]
    runs: list[int]
    expected: set[int]
    slots: dict[tuple[int, str], int] = field(default_factory=dict)  # (conc, metric) -> series
    joint: tuple[int, ...] = ()  # the config's shared change points (positions in runs)
