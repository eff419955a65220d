"""Steps on main: which series of main's history changed level in its newest runs, and
between which two runs (the last good and the first bad point).

Pure: results documents in (oldest first), steps out. A series is cut at its own change
points and at its config's joint ones exactly as `infx.results.verdict.judge` cuts it; a step is
reported when the newest cut falls within the newest `recent` runs and the level moved by
more than `threshold` percent.
"""

from __future__ import annotations

import math

import numpy as np

from infx.results.noise import single as noise
from infx.results.table.keys import config_label, index, point_names
from infx.results.table.metrics import CHECKS, Metric
from infx.results.table.rows import Table, metrics_of, run_of
from infx.results.verdict.steps import Step
from infx.results.verdict.words import IMPROVED, REGRESSED

# A series' own step is tested stricter than a PR's checks (every series of main is tested
# at each ingest, and a false issue costs a person's time); a step its config's other
# series share (a new image: the joint test found it) at SHARED_ALPHA, reported only when
# SHARED_MIN series or more of the config moved.
ALPHA = noise.ALPHA / 10
SHARED_ALPHA = 0.01
SHARED_MIN = 3


def _segment_mean(x: np.ndarray) -> float:
    return float(np.mean(x))


def _significant(x: np.ndarray, cuts: set[int], previous: int, last: int, alpha: float) -> bool:
    """The two levels differ beyond the series' scatter within segments (a two-sample
    test), so a cut that only split noise is not reported."""
    level = noise.level(x, tuple(sorted(cuts)))
    if level.sigma is None:
        sigma, df = noise.DEFAULT_NOISE, None
    else:  # first differences too: cuts that split noise make segments look calmer
        sigma, df = max(level.sigma, noise.diff_scale(x)), level.df
    a, b = last - previous, len(x) - last
    spread = sigma * math.sqrt(1 / a + 1 / b)
    jump = abs(float(np.mean(x[last:]) - np.mean(x[previous:last])))
    return jump > noise.critical(df, alpha) * spread


def detect(history: list[Table], recent: int = 3, threshold: float = 2.0) -> list[Step]:
    """Steps whose first bad run is among the newest `recent` runs of their series' config."""
    runs = [run_of(d) for d in history]
    names = point_names(d.get("rows", []) for d in history)
    indexed = [index(d.get("rows", []), names=names) for d in history]
    keys = sorted({k for p in indexed for k in p if k.startswith("throughput|")})
    out: list[Step] = []
    for key in keys:
        held = [i for i, p in enumerate(indexed) if key in p]
        if len(held) < 3 or held[-1] < len(history) - recent:
            continue
        series: list[np.ndarray] = []
        where: list[list[int]] = []
        measured: list[tuple[int, Metric]] = []  # (conc, metric) of each series
        concs = sorted({c for i in held for c in indexed[i][key]})
        for conc in concs:
            for metric in CHECKS:
                values, at = [], []
                for pos, i in enumerate(held):
                    row = indexed[i][key].get(conc)
                    value = metrics_of(row).get(metric.key)
                    if isinstance(value, int | float) and value > 0:
                        values.append(math.log(value))
                        at.append(pos)
                if len(values) >= 3:
                    series.append(np.array(values))
                    where.append(at)
                    measured.append((conc, metric))
        if not series:
            continue
        own = noise.break_points(series)
        complete = [s for s, at in zip(series, where, strict=True) if len(at) == len(held)]
        joint = noise.joint_breaks(complete) if complete else ()
        row = next(iter(indexed[held[-1]][key].values()))
        label = config_label(row["identity"])
        for x, at, found, (conc, metric) in zip(series, where, own, measured, strict=True):
            shared = set()
            for b in joint:
                position = next((p for p, run in enumerate(at) if run >= b), None)
                if position:
                    shared.add(position)
            cuts = set(found) | shared
            if not cuts:
                continue
            last = max(cuts)
            first_bad = held[at[last]]
            if first_bad < len(history) - recent:
                continue
            previous = max((c for c in cuts if c < last), default=0)
            before, after = _segment_mean(x[previous:last]), _segment_mean(x[last:])
            change = (math.exp(after - before) - 1) * 100
            if abs(change) <= threshold:
                continue
            strict = _significant(x, cuts, previous, last, ALPHA)
            if not strict and not (
                last in shared and _significant(x, cuts, previous, last, SHARED_ALPHA)
            ):
                continue
            better = (change > 0) == metric.higher_is_better
            out.append(
                Step(
                    key,
                    label,
                    conc,
                    metric,
                    math.exp(before),
                    math.exp(after),
                    change,
                    runs[held[at[last - 1]]],
                    runs[first_bad],
                    IMPROVED if better else REGRESSED,
                    strict,
                )
            )
    # A shared step seen in one series only is noise that happened to line up.
    count: dict[tuple[str, int | None], int] = {}
    for step in out:
        count[(step.key, step.bad.get("id"))] = count.get((step.key, step.bad.get("id")), 0) + 1
    return [s for s in out if s.strict or count[(s.key, s.bad.get("id"))] >= SHARED_MIN]
