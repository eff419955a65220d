"""Pareto coverage of a pull request's sweep: does each throughput curve it measured have
enough points on its frontier to be drawn, compared and trusted?

The rules (docs/review.md says where they differ from InferenceX's):

- a curve is what the results site draws as one: one model, scenario (ISL/OSL, or the
  agentic scenario), runner label, framework, precision, speculative decoding,
  single/multi-node and agg/disagg (the family of `infx.results.table.keys`, the runner node's
  hardware name aside); its configs (parallelisms) and concurrencies are its points;
- a point is (latency, throughput): end-to-end latency in seconds (median for a
  fixed-sequence row, p90 for an agentic one) against total throughput per GPU; a point
  with either missing, zero, negative or not finite is invalid: it is counted, never drawn;
- the frontier is the upper-right one: a point is on it when no other point has lower or
  equal latency and higher or equal throughput (the same point twice is one point);
- a curve passes with at least `points` frontier points (5 by default, `[review]
  pareto-points`) and no invalid point; the sweep passes when every curve does, and the
  sweep's plan, when given, names the curves it meant to measure: one that left no
  point has 0. With no curve at all the check does not pass: nothing proves coverage.

Pure: rows and plan rows in, a verdict out. Advisory: it never gates a merge.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any

from infx.markdown import code, table, text
from infx.results.table.keys import family_key

DEFAULT_POINTS = 5
FORMAT = "infx-pareto-coverage/1"
AGENTIC = "agentic-coding"
_LABEL_KEYS = ("runner", "framework", "precision")


@dataclass(frozen=True)
class Curve:
    key: str
    label: str
    measured: int
    invalid: int
    frontier: tuple[tuple[float, float], ...]  # (latency s, throughput/GPU), rising latency

    def passed(self, points: int) -> bool:
        return self.invalid == 0 and len(self.frontier) >= points


@dataclass(frozen=True)
class Coverage:
    points: int
    curves: tuple[Curve, ...]

    @property
    def passed(self) -> bool:
        return bool(self.curves) and all(c.passed(self.points) for c in self.curves)

    @property
    def short(self) -> tuple[Curve, ...]:
        return tuple(c for c in self.curves if not c.passed(self.points))


def frontier(points: Iterable[tuple[float, float]]) -> list[tuple[float, float]]:
    """The upper-right frontier of (latency, throughput): by rising latency, each point
    with more throughput than every point at lower or equal latency."""
    best: list[tuple[float, float]] = []
    for x, y in sorted(set(points), key=lambda p: (p[0], -p[1])):
        if not best or y > best[-1][1]:
            best.append((x, y))
    return best


def _usable(value: Any) -> float | None:
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        return None
    number = float(value)
    return number if math.isfinite(number) and number > 0 else None


def curve_of(identity: Mapping[str, Any]) -> tuple[str, str]:
    """(key, label) of the curve a throughput point belongs to."""
    family = {k: v for k, v in identity.items() if k not in ("hardware", "conc")}
    scenario = (
        f"{identity.get('isl')}x{identity.get('osl')}"
        if "isl" in identity and identity.get("scenario") != AGENTIC
        else str(identity.get("scenario", "?"))
    )
    key = f"{scenario}|{family_key('throughput', family)}"
    parts = [str(identity.get("model-prefix") or identity.get("model", "?")), scenario]
    parts += [str(identity.get(k, "?")) for k in _LABEL_KEYS]
    if identity.get("spec-decoding", "none") != "none":
        parts.append(str(identity["spec-decoding"]))
    if identity.get("multinode"):
        parts.append("multi-node")
    if identity.get("disagg"):
        parts.append("disagg")
    kv = identity.get("kv-offloading")
    if kv and kv != "none":
        parts.append(f"kv {kv}")
    return key, " · ".join(parts)


def latency_key(identity: Mapping[str, Any]) -> str:
    return "p90_e2el" if identity.get("scenario") == AGENTIC else "median_e2el"


def coverage(
    rows: Iterable[Mapping[str, Any]],
    planned: Iterable[Mapping[str, Any]] = (),
    points: int = DEFAULT_POINTS,
) -> Coverage:
    """The coverage of a results table's throughput rows; `planned` are identities (conc
    aside) the sweep planned, so a curve that measured nothing shows with 0 points."""
    found: dict[str, tuple[str, list[tuple[float, float]], list[int]]] = {}
    for identity in planned:
        key, label = curve_of(identity)
        found.setdefault(key, (label, [], [0, 0]))
    for row in rows:
        if row.get("kind") != "throughput":
            continue
        identity = row["identity"]
        key, label = curve_of(identity)
        _, xy, counts = found.setdefault(key, (label, [], [0, 0]))
        metrics = row.get("metrics") or {}
        x, y = _usable(metrics.get(latency_key(identity))), _usable(metrics.get("tput_per_gpu"))
        counts[0] += 1
        if x is None or y is None:
            counts[1] += 1
        else:
            xy.append((x, y))
    curves = tuple(
        Curve(key, label, counts[0], counts[1], tuple(frontier(xy)))
        for key, (label, xy, counts) in sorted(found.items(), key=lambda item: item[1][0])
    )
    return Coverage(points, curves)


def as_json(found: Coverage) -> dict[str, Any]:
    return {
        "format": FORMAT,
        "points": found.points,
        "status": "pass" if found.passed else "warn",
        "curves": [
            {
                "curve": c.label,
                "key": c.key,
                "measured": c.measured,
                "invalid": c.invalid,
                "frontier": len(c.frontier),
                "status": "pass" if c.passed(found.points) else "warn",
                "frontier-points": [list(p) for p in c.frontier],
            }
            for c in found.curves
        ],
    }


def headline(found: Coverage) -> str:
    if not found.curves:
        return "no throughput curve was measured: nothing shows the sweep's coverage"
    if found.passed:
        return f"every curve ({len(found.curves)}) has at least {found.points} frontier points"
    return (
        f"{len(found.short)} of {len(found.curves)} curve(s) have fewer than {found.points} "
        "frontier points or an invalid point"
    )


def markdown(found: Coverage) -> str:
    """The summary: one line per curve, every value escaped."""
    mark = "✅" if found.passed else "⚠️"
    lines = [f"### Pareto coverage {mark}", "", text(headline(found)), ""]
    if found.curves:
        rows = [
            (
                text(c.label),
                c.measured,
                c.invalid,
                f"{len(c.frontier)}/{found.points}",
                "pass" if c.passed(found.points) else "warn",
            )
            for c in found.curves
        ]
        lines.append(table(("curve", "points", "invalid", "frontier", ""), rows,
                           ("left", "right", "right", "right", "left")))  # fmt: skip
    lines.append(
        f"Latency is {code('median_e2el')} ({code('p90_e2el')} for agentic rows), throughput "
        f"{code('tput_per_gpu')}. Advisory: a curve short of points asks for another look, "
        "it does not block a merge."
    )
    return "\n".join(lines) + "\n"
