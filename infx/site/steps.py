"""Where each config of main's history stepped, and how far each point scatters: the noise
model of `infx results compare` (infx/results/noise/single.py) applied to the whole history.

Each series (one metric of one point over the runs that measured it) is cut at its own
change points and at its config's joint ones (all series measured in every run of the
config, together), exactly as a comparison cuts main's history. A step is a run where any
series of the config starts a new segment: its first changed run, the run before it that
measured the config, and how far each series moved (mean of the segment after against the
segment before, on the log scale). A series' own change point within a run of a joint one
is taken to be that joint step (noise placed it a run off), so one change shows as one step.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from infx.results.noise import single as noise
from infx.results.verdict.words import DEFAULT_THRESHOLD
from infx.site.model import STEP_METRICS, ConfigHistory


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
    joint: bool  # among the config's joint change points


@dataclass(frozen=True)
class Noise:
    """Main's scatter at one point's throughput: what a chart's band shows."""

    # One standard deviation of a run, percent: the series' own scatter (newest segment,
    # else its segments pooled), else its config's pooled scatter, else the assumed 2 %.
    sigma_pct: float
    band_pct: float  # half-width within which `results compare` calls a new run noise
    assumed: bool  # too little history: the assumed 2 % per run


@dataclass(frozen=True)
class ConfigSteps:
    steps: tuple[Step, ...]
    noise: dict[int, Noise]  # conc -> throughput noise


def _series(config: ConfigHistory, metric: str, conc: int) -> tuple[np.ndarray, list[int]] | None:
    points = config.points[conc]
    pairs = [
        (run, value)
        for run, value in zip(points.runs, points.values.get(metric, []), strict=True)
        if value is not None and value > 0
    ]
    if not pairs:
        return None
    return noise.logs([v for _, v in pairs]), [r for r, _ in pairs]


def _segments_change(x: np.ndarray, breaks: list[int], at: int) -> float:
    """Percent change of the segment starting at `at` against the one before."""
    bounds = [0, *breaks, len(x)]
    i = bounds.index(at)
    before = x[bounds[i - 1] : at]
    after = x[at : bounds[i + 1]]
    return (math.exp(float(after.mean()) - float(before.mean())) - 1.0) * 100.0


def config_steps(config: ConfigHistory, threshold: float = DEFAULT_THRESHOLD) -> ConfigSteps:
    """The config's steps and its points' throughput noise."""
    runs = config.runs
    slots: list[tuple[int, str]] = []
    series: list[np.ndarray] = []
    where: list[list[int]] = []
    for conc in sorted(config.points):
        for metric in STEP_METRICS:
            found = _series(config, metric, conc)
            if found is not None:
                slots.append((conc, metric))
                series.append(found[0])
                where.append(found[1])
    own = noise.break_points(series)
    complete = [i for i, w in enumerate(where) if len(w) == len(runs)]
    joint = noise.joint_breaks([series[i] for i in complete]) if complete else ()
    joint_runs = {runs[b] for b in joint}
    merged: list[list[int]] = []
    # Per series, the run each cut is reported at: a joint cut at the joint step's run (a
    # series that skipped that run cuts at its next value), its own cuts where they fall.
    reported: list[dict[int, int]] = []
    for i, at in enumerate(where):
        shared: dict[int, int] = {}
        for run in sorted(joint_runs):
            # A joint change point, as an index into this series (runs it missed skipped).
            cut = next((p for p, r in enumerate(at) if r >= run), None)
            if cut:
                shared.setdefault(cut, run)
        # A series' own cut a run or so from a shared one is that step, placed a run off
        # by noise: the shared one stands for it (no one-run segment between the two).
        cuts = {c: at[c] for c in own[i] if all(abs(c - j) >= noise.MIN_SEGMENT for j in shared)}
        cuts.update(shared)
        merged.append(sorted(cuts))
        reported.append(cuts)
    moved: dict[int, list[Moved]] = {}
    before: dict[int, int] = {}
    for (conc, metric), x, at, sorted_cuts, runs_at in zip(
        slots, series, where, merged, reported, strict=True
    ):
        for cut in sorted_cuts:
            run = runs_at[cut]
            change = _segments_change(x, sorted_cuts, cut)
            moved.setdefault(run, []).append(Moved(conc, metric, change))
            # The widest range: from the earliest of the moved series' previous values.
            previous = at[cut - 1]
            before[run] = min(before.get(run, previous), previous)
    steps = tuple(
        Step(run, before[run], tuple(moved[run]), run in joint_runs) for run in sorted(moved)
    )
    return ConfigSteps(steps, _noise(slots, series, merged, threshold))


def _noise(
    slots: list[tuple[int, str]],
    series: list[np.ndarray],
    merged: list[list[int]],
    threshold: float,
) -> dict[int, Noise]:
    levels = {
        slot: noise.level(x, tuple(cuts))
        for slot, x, cuts in zip(slots, series, merged, strict=True)
        if slot[1] == "tput_per_gpu"
    }
    pool = noise.pooled(list(levels.values()))
    out = {}
    for (conc, _), level in levels.items():
        band = noise.band(level, pool, threshold)
        sigma = level.sigma if level.sigma is not None else pool[0]
        assumed = sigma is None
        scatter = noise.DEFAULT_NOISE if sigma is None else sigma
        out[conc] = Noise(scatter * 100.0, band.pct, assumed)
    return out
