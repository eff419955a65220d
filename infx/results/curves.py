"""A config's curve measures: throughput per GPU at matched interactivity (each point against
main's Pareto frontier, interpolated at its interactivity) and at equal concurrency (each
point against its own level), each a mean over the config's points with a history of its
own, hence a level, a scatter and a band."""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any

import numpy as np

from infx.results import noise
from infx.results.compare import interactivity
from infx.results.points import direction
from infx.results.report import Curve
from infx.results.series import History, Pending, mapped, positive


def frontier(points: Sequence[tuple[float, float]]) -> list[tuple[float, float]]:
    """The points no other point beats on both axes, by rising interactivity."""
    best: list[tuple[float, float]] = []
    for point in sorted(points, key=lambda p: (-p[0], -p[1])):
        if not best or point[1] > best[-1][1]:
            best.append(point)
    return sorted(best)


def gap(
    edge: list[tuple[float, float]], points: Sequence[tuple[float, float]]
) -> tuple[list[float], list[float]]:
    """log(throughput / main's frontier at the same interactivity) of each point in range,
    and the frontier's elasticity there (d log throughput / d log interactivity), which
    carries the noise of interactivity into the gap."""
    if len(edge) < 2 or not points:
        return [], []
    xs = np.array([p[0] for p in edge])
    ys = np.log([p[1] for p in edge])
    px = np.array([p[0] for p in points])
    py = np.array([p[1] for p in points])
    inside = (px >= xs[0]) & (px <= xs[-1]) & (py > 0)
    px, py = px[inside], py[inside]
    gaps = np.log(py) - np.interp(px, xs, ys)
    i = np.clip(np.searchsorted(xs, px), 1, len(xs) - 1)
    run = np.log(xs[i] / xs[i - 1])
    with np.errstate(divide="ignore", invalid="ignore"):
        slopes = np.where(run > 0, (ys[i] - ys[i - 1]) / np.where(run > 0, run, 1), 0.0)
    return gaps.tolist(), slopes.tolist()


def _xy(row: dict[str, Any]) -> tuple[float, float] | None:
    x, y = interactivity(row.get("metrics", {})), positive(row, "tput_per_gpu")
    return (x, y) if x and y else None


def aggregates(
    pending: list[Pending], levels: list[noise.Level], hist: History, threshold: float
) -> list[tuple[Curve | None, Curve | None]]:
    """Each config's two curve measures and their histories, estimated together:
    throughput per GPU at matched interactivity (against main's frontier) and at equal
    concurrency (against each point's level), each a mean over the config's points."""
    measures: list[np.ndarray] = []
    staged: list[tuple[int, list[float], list[float], tuple[tuple[float, float], ...]]] = []
    pools: list[tuple[float | None, int]] = []  # each job's pooled throughput scatter
    owners: list[tuple[int, int]] = []  # (job, 0 curve | 1 equal concurrency)
    joints: list[set[int]] = []
    for j, job in enumerate(pending):
        pools.append(
            noise.pooled([levels[i] for (conc, m), i in job.slots.items() if m == "tput_per_gpu"])
        )
        ref = []
        for conc in sorted(job.expected | set(job.mine)):
            xi, yi = job.slots.get((conc, "intvty")), job.slots.get((conc, "tput_per_gpu"))
            if xi is not None and yi is not None:
                ref.append((levels[xi].value, levels[yi].value))
        edge = frontier(ref)
        mine, slopes = gap(edge, [xy for xy in map(_xy, job.mine.values()) if xy])
        past, at = [], []
        for pos, i in enumerate(job.runs):
            found, _ = gap(edge, [xy for xy in map(_xy, hist.points[i][job.key].values()) if xy])
            if len(found) >= 2:
                past.append(float(np.mean(found)))
                at.append(pos)
        if len(mine) >= 2 and past:
            owners.append((j, 0))
            staged.append((len(measures), mine, slopes, tuple(edge)))
            measures.append(np.array(past))
            joints.append(mapped(job.joint, at))
        centers = {
            conc: levels[i].center
            for (conc, m), i in job.slots.items()
            if m == "tput_per_gpu" and conc in job.mine
        }
        same = _offsets(job.mine, centers)
        past, at = [], []
        for pos, i in enumerate(job.runs):
            found = _offsets(hist.points[i][job.key], centers)
            if len(found) >= 2:
                past.append(float(np.mean(found)))
                at.append(pos)
        if len(same) >= 2 and past:
            owners.append((j, 1))
            staged.append((len(measures), same, [0.0] * len(same), ()))
            measures.append(np.array(past))
            joints.append(mapped(job.joint, at))
    found_levels = [
        noise.level(x, tuple(sorted(set(own) | joint)))
        for x, own, joint in zip(measures, noise.break_points(measures), joints, strict=True)
    ]
    out: list[list[Curve | None]] = [[None, None] for _ in pending]
    for (j, which), (slot, mine, slopes, drawn) in zip(owners, staged, strict=True):
        out[j][which] = _measure(found_levels[slot], mine, slopes, drawn, threshold, pools[j])
    return [(a, b) for a, b in out]


def _offsets(points: dict[int, dict[str, Any]], centers: dict[int, float]) -> list[float]:
    """log(throughput / main's level at the same concurrency) of each point with a level."""
    out = []
    for conc, row in points.items():
        value = positive(row, "tput_per_gpu")
        if conc in centers and value is not None:
            out.append(math.log(value) - centers[conc])
    return out


def _measure(
    lv: noise.Level,
    mine: list[float],
    slopes: list[float],
    edge: tuple[tuple[float, float], ...],
    threshold: float,
    point: tuple[float | None, int] = (None, 0),
) -> Curve:
    change = (math.exp(float(np.mean(mine)) - lv.center) - 1.0) * 100.0
    if lv.sigma is None:
        # No scatter of the measure itself: the per-point noise (the config's pooled
        # throughput scatter, else the assumed one), carried through the frontier's slope
        # (interactivity is measured too) and averaged over the points.
        base, df = (point[0], point[1]) if point[0] is not None else (noise.DEFAULT_NOISE, None)
        sigma = base * math.sqrt(sum(1 + s * s for s in slopes)) / len(mine)
        width = 100.0 * noise.critical(df) * sigma * math.sqrt(1 + 1 / max(lv.k, 1))
        band = noise.Band(max(threshold, width), sigma, point[0] is None)
    else:
        band = noise.band(lv, (None, 0), threshold)
    verdict = direction(change, band.pct, higher_is_better=True)
    return Curve(len(mine), change, band.pct, band.sigma * 100, lv.k, band.assumed, verdict, edge)
