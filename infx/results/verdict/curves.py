"""Throughput per GPU at matched interactivity: each PR point against main's Pareto frontier
(drawn through main's levels) interpolated at the point's interactivity, averaged over the
points inside the frontier's range. Main's own runs measured the same way give the
measure's history, hence its level, scatter and test (`decide.Curves`).

The comparison says nothing, and never gates, where it is meaningless:

- the frontier's interactivity spans less than MIN_SPAN of its throughput's (log scale):
  interactivity hardly moves while throughput does (a launch-bound engine: throughput
  x11 from concurrency 1 to 16 while interactivity falls 17 % on the H200 runs), so a
  1 % wobble of interactivity reads as a 13 % gap in throughput;
- its band (the change it must show to be flagged alone) is wider than MAX_BAND;
- main's history of the measure has fewer than MIN_DF degrees of freedom.
"""

from __future__ import annotations

import math
from collections.abc import Sequence

import numpy as np

from infx.results.noise import cuts, fit
from infx.results.noise.series import Arrays, Pending
from infx.results.noise.tdist import t_ppf
from infx.results.verdict import decide

MIN_SPAN = 0.1
MAX_BAND = 50.0  # percent
TPUT, INTVTY = 0, 5  # metric indexes in the arrays


def frontier(points: Sequence[tuple[float, float]]) -> list[tuple[float, float]]:
    """The points no other point beats on both axes, by rising interactivity."""
    best: list[tuple[float, float]] = []
    for point in sorted(points, key=lambda p: (-p[0], -p[1])):
        if not best or point[1] > best[-1][1]:
            best.append(point)
    return sorted(best)


def _gaps(edge: list[tuple[float, float]], x: np.ndarray, logy: np.ndarray) -> np.ndarray:
    """log(throughput / main's frontier at the same interactivity) of each point inside
    the frontier's range (NaN outside it or where a value is missing); any shape."""
    xs = np.array([p[0] for p in edge])
    ys = np.log([p[1] for p in edge])
    inside = (x >= xs[0]) & (x <= xs[-1]) & np.isfinite(logy)
    out: np.ndarray = np.where(inside, logy - np.interp(np.nan_to_num(x), xs, ys), np.nan)
    return out


class Measured:
    """Each pending config's curve measure: frontier, PR gaps, main's per-run history, and
    why it says nothing (None: it is meaningful)."""

    def __init__(self, pending: Sequence[Pending], data: Arrays, found: fit.Fit) -> None:
        configs, runs = data.values.shape[:2]
        self.edges: list[tuple[tuple[float, float], ...]] = []
        self.why: list[str | None] = []
        self.matched = np.zeros(configs, dtype=int)
        self.mine = np.full(configs, np.nan)  # mean PR gap (log)
        self.history = np.full((configs, runs), np.nan)
        self.runs = np.full(configs, np.nan)  # this PR's runs behind the gap
        center = np.exp(found.center)
        for c, _ in enumerate(pending):
            ref = [
                (float(center[c, j, INTVTY]), float(center[c, j, TPUT]))
                for j in range(center.shape[1])
                if np.isfinite(center[c, j, INTVTY]) and np.isfinite(center[c, j, TPUT])
            ]
            edge = frontier(ref)
            self.edges.append(tuple(edge))
            if len(edge) < 2:
                self.why.append("main's frontier has fewer than two points")
                continue
            ix = math.log(edge[-1][0] / edge[0][0])
            iy = abs(math.log(max(p[1] for p in edge) / min(p[1] for p in edge)))
            mine = _gaps(edge, np.exp(data.pr[c, :, INTVTY]), data.pr[c, :, TPUT])
            self.matched[c] = int(np.isfinite(mine).sum())
            if self.matched[c] >= 2:
                self.mine[c] = float(np.nanmean(mine))
                self.runs[c] = float(
                    np.nanmin(np.where(np.isfinite(mine), data.repeats[c, :, TPUT], np.nan))
                )
            past = _gaps(edge, np.exp(data.values[c, :, :, INTVTY]), data.values[c, :, :, TPUT])
            enough = np.isfinite(past).sum(axis=1) >= 2
            with np.errstate(invalid="ignore"):
                self.history[c] = np.where(enough, np.nanmean(past, axis=1), np.nan)
            if iy > 0 and ix < MIN_SPAN * iy:
                self.why.append(
                    f"interactivity moves {ix / iy:.0%} as much as throughput along main's curve"
                    " (log scale), so its noise swamps the comparison"
                )
            else:
                self.why.append(None)

    def tests(self, found: fit.Fit, tested: int, tests: np.ndarray) -> decide.Curves:
        """Level and scatter of each measure's history (cut at its own change points and
        its config's joint ones), and this PR's t against it."""
        where = cuts.own_cuts(self.history) | found.joint
        lv = fit.levels(self.history, where)
        df = lv.df.astype(float)
        sigma = np.sqrt(np.where(df > 0, lv.squares / np.maximum(df, 1), np.nan))
        scale = sigma * np.sqrt(1 / self.runs + 1 / np.where(lv.k > 0, lv.k, np.nan))
        x = self.mine - lv.center
        t = x / scale
        alpha = decide.Q / max(tested, 1) / np.maximum(tests + 1, 1)
        crit = t_ppf(1 - alpha, np.maximum(df, 1))
        band = np.expm1(crit * scale) * 100
        self.band, self.sigma, self.k, self.df = band, sigma, lv.k.astype(float), df
        for c, why in enumerate(self.why):
            if why is not None or not np.isfinite(self.mine[c]):
                continue
            if df[c] < fit.MIN_DF or not np.isfinite(t[c]):
                self.why[c] = f"main's history of it has {int(df[c])} degrees of freedom"
            elif band[c] > MAX_BAND:
                self.why[c] = f"its band is ±{band[c]:.0f} % (wider than ±{MAX_BAND:.0f} %)"
        ok = np.array([w is None for w in self.why]) & np.isfinite(t)
        self.change = np.expm1(x) * 100
        recent = lv.k_moved > 0
        x_moved = np.where(recent, x - np.nan_to_num(lv.moved), x)
        k_moved = np.where(recent, lv.k_moved, np.where(lv.k > 0, lv.k, np.nan))
        t_moved = x_moved / (sigma * np.sqrt(1 / self.runs + 1 / k_moved))
        return decide.Curves(
            t=np.where(ok, t, np.nan),
            df=np.maximum(df, 1),
            change=np.where(ok, self.change, np.nan),
            k=self.k,
            t_moved=np.where(ok, t_moved, np.nan),
            change_moved=np.where(ok, np.expm1(x_moved) * 100, np.nan),
        )
