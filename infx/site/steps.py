"""Where each config of main's history stepped, and how far each point scatters: the noise
model of `infx results compare` (`infx.results.noise.model`) over the whole history of each
config, every config at once.

A step is a change point of the config's runs (all its points and gated metrics together):
its first changed run, the run before it that measured the moved series (the widest range,
so an entry that landed after a series' last value still explains it), and how far each
series moved (mean of the segment after against the segment before, outliers left out).
One bad run is an outlier, named as such, never a step; a drift is one line (percent per
run), never a staircase of steps. A point's band is the one `results compare` gives one run
of a pull request sweeping this config alone, on main's newest `history-runs` runs.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from infx.results.noise.model import LINE, Model, fit
from infx.results.noise.series import GATED, METRICS
from infx.results.verdict.decide import Q
from infx.results.verdict.power import bands_alone
from infx.results.verdict.words import DEFAULT_THRESHOLD
from infx.site.model import STEP_METRICS, ConfigHistory

HISTORY_RUNS = 20  # main's runs a band rests on, as `results compare` reads them by default
# the site's metric names -> the model's (interactivity is `intvty` in both)
_INDEX = {m: i for i, m in enumerate(METRICS)}
_STEPPED = [(_INDEX[m], m) for m in STEP_METRICS]


@dataclass(frozen=True)
class Moved:
    conc: int
    metric: str
    change_pct: float


@dataclass(frozen=True)
class Step:
    run: int  # Run.index of the first changed run
    before: int  # Run.index of the run before it that measured the config
    moved: tuple[Moved, ...]
    joint: bool  # the whole config moved (always, now: steps are the config's)


@dataclass(frozen=True)
class Noise:
    """Main's scatter at one point's throughput: what a chart's band shows."""

    sigma_pct: float  # one run's scatter at this point, in log percent (its run's and its own)
    band_pct: float  # half-width within which `results compare` calls a new run noise
    assumed: bool  # too little history: the assumed 2 % per run


@dataclass(frozen=True)
class ConfigSteps:
    steps: tuple[Step, ...]
    noise: dict[int, Noise]  # conc -> throughput noise
    outliers: tuple[int, ...] = ()  # Run.index of runs left out as outliers (not steps)
    drift: tuple[tuple[str, float], ...] = ()  # (metric, percent per run) where it drifts


def _arrays(
    configs: Sequence[ConfigHistory],
) -> tuple[np.ndarray, list[list[int]], list[list[int]]]:
    """(C, N, J, M) logs aligned at each config's newest run; its runs; its concurrencies."""
    runs = [c.runs for c in configs]
    concs = [sorted(c.points) for c in configs]
    width = max((len(r) for r in runs), default=1) or 1
    depth = max((len(j) for j in concs), default=1) or 1
    values = np.full((len(configs), width, depth, len(METRICS)), np.nan)
    for c, config in enumerate(configs):
        offset = width - len(runs[c])
        at = {run: offset + i for i, run in enumerate(runs[c])}
        for j, conc in enumerate(concs[c]):
            series = config.points[conc]
            for metric, found in series.values.items():
                m = _INDEX.get(metric)
                if m is None:
                    continue
                for run, value in zip(series.runs, found, strict=True):
                    if value is not None and value > 0:
                        values[c, at[run], j, m] = math.log(value)
    return values, runs, concs


def _steps(
    model: Model, values: np.ndarray, c: int, runs: list[int], concs: list[int]
) -> tuple[Step, ...]:
    offset = values.shape[1] - len(runs)
    ids = np.cumsum(model.cuts[c])
    kept = model.kept[c]
    out = []
    for p in np.nonzero(model.cuts[c])[0]:
        after = kept & (ids == ids[p])
        before = kept & (ids == ids[p] - 1)
        moved = []
        first = runs[p - offset - 1]
        for j, conc in enumerate(concs):
            for m, metric in _STEPPED:
                x = values[c, :, j, m]
                a, b = x[after & np.isfinite(x)], x[before & np.isfinite(x)]
                if not len(a) or not len(b):
                    continue
                moved.append(Moved(conc, metric, float(np.expm1(a.mean() - b.mean()) * 100)))
                last = np.nonzero(np.isfinite(x[:p]))[0]
                if len(last) and last[-1] >= offset:
                    first = min(first, runs[int(last[-1]) - offset])
        if moved:
            out.append(Step(runs[p - offset], first, tuple(moved), True))
    return tuple(out)


def analyse_all(
    configs: Sequence[ConfigHistory],
    threshold: float = DEFAULT_THRESHOLD,
    history_runs: int = HISTORY_RUNS,
    q: float = Q,
) -> dict[str, ConfigSteps]:
    """Every config's steps, outliers, drift and throughput noise, fitted at once."""
    if not configs:
        return {}
    values, runs, concs = _arrays(configs)
    counts = np.array([len(r) for r in runs])
    whole = fit(values, counts, GATED)
    recent = fit(values, np.minimum(counts, history_runs), GATED)
    bands = bands_alone(recent, threshold, q)[:, :, 0]
    scatter = np.hypot(recent.run_sd[:, None, 0], recent.point_sd[:, :, 0])
    out = {}
    for c, config in enumerate(configs):
        offset = values.shape[1] - len(runs[c])
        noise = {
            conc: Noise(float(scatter[c, j] * 100), float(bands[c, j]), bool(recent.assumed[c, 0]))
            for j, conc in enumerate(concs[c])
            if np.isfinite(bands[c, j])
        }
        outliers = tuple(runs[c][p - offset] for p in np.nonzero(whole.outlier[c])[0])
        drift: tuple[tuple[str, float], ...] = ()
        if whole.shape[c] == LINE:
            drift = tuple(
                (METRICS[m], float(np.expm1(whole.slope[c, m]) * 100)) for m in np.nonzero(GATED)[0]
            )
        steps = _steps(whole, values, c, runs[c], concs[c])
        out[config.slug] = ConfigSteps(steps, noise, outliers, drift)
    return out
