"""How far one benchmark series on main scatters, and where it stepped: the single-series
view `infx results changes` and the results site use (a comparison judges all its series at
once, `infx.results.noise.fit`, with the same cuts and outlier rule).

A series is one metric of one point (config without image and fingerprint, concurrency)
over main's runs, oldest first. Values are compared on a log scale, so noise and changes
are relative. A step (a new image, a driver) is a change, not noise: the series is cut at
its change points (optimal partitioning with an L2 cost, `infx.results.noise.segments`; penalty
PENALTY x sigma^2 x ln n with sigma from the median absolute first difference, which a
few steps do not move, or their root mean square below ROBUST_DIFFS differences), and
main's level is the newest segment's. The scatter is the standard deviation of that
segment after dropping outliers (beyond OUTLIER robust standard deviations and outside
the other values' prediction interval), so one bad run neither hides nor fakes a change.
A newest segment shorter than MIN_HISTORY borrows the scatter of the series' older
segments; a series with fewer values than that has no estimate of its own, and its
squares go to its config's pooled scatter (`pooled`).

NumPy is all it needs (`infx.results.noise.tdist` gives Student's t and the chi-square).
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from functools import cache
from statistics import NormalDist, median

import numpy as np

from infx.results.noise import cuts, fit, segments, tdist

# Relative standard deviation per measurement assumed when a series has no estimate:
# InferenceX's "normal variance +-2 %".
DEFAULT_NOISE = fit.DEFAULT_NOISE
# Values a segment (or all segments together) needs for a scatter estimate of its own.
MIN_HISTORY = 5
# One-sided false-alarm probability per check of the single-series view (the site's bands,
# and `results changes`, which tests stricter still).
ALPHA = 0.0005
# Change-point penalty factor (x sigma^2 x ln n), and the shortest segment a series may be
# cut into alone (one value could be an outlier) or together with its config's other series.
PENALTY = cuts.PENALTY
MIN_SEGMENT = cuts.MIN_SEGMENT
MIN_JOINT_SEGMENT = cuts.MIN_JOINT_SEGMENT
# Chance that noise alone cuts a config's joint series (see joint_breaks).
JOINT_ALPHA = cuts.JOINT_ALPHA
JOINT_CLIP = cuts.JOINT_CLIP
OUTLIER = fit.OUTLIER
# Chance that one series of pure noise loses a value as an outlier.
OUTLIER_ALPHA = fit.OUTLIER_ALPHA
# First differences a series needs before their MAD (robust to a step) estimates its noise.
ROBUST_DIFFS = cuts.ROBUST_DIFFS
_MADN = 1.4826  # MAD -> standard deviation for normal data
_TINY = 1e-6


@dataclass(frozen=True)
class Level:
    """Main's level of one series, from its newest segment."""

    center: float  # log of the level: mean of the newest segment's inliers
    k: int  # inliers of the newest segment
    sigma: float | None  # scatter within segments (log units); None: too few values
    df: int  # degrees of freedom of sigma (0 when None)
    breaks: tuple[int, ...]  # indexes where a newer segment starts
    n: int  # values in the series
    # Squared deviations within segments and their degrees of freedom, however few: what
    # this series adds to its config's pooled scatter (sigma^2 x df when sigma is known).
    squares: float = 0.0
    dof: int = 0

    @property
    def value(self) -> float:
        return math.exp(self.center)


def logs(values: Sequence[float]) -> np.ndarray:
    """The log series; a value <= 0 cannot be judged relatively and is left out by callers."""
    series: np.ndarray = np.log(np.asarray(values, dtype=float))
    return series


def _median(values: Sequence[float]) -> float:
    """statistics.median: for the few dozen values of a series, far cheaper than NumPy's."""
    return median(values)


def diff_scale(x: np.ndarray) -> float:
    """Noise from first differences (`segments.diff_scale`): their MAD with ROBUST_DIFFS
    differences or more, which a step does not move; their root mean square below that."""
    return float(segments.diff_scale(np.asarray(x, dtype=float)[None, :], ROBUST_DIFFS)[0])


def penalty(x: np.ndarray) -> float:
    scale = max(diff_scale(x), DEFAULT_NOISE / 10)
    return PENALTY * scale * scale * math.log(len(x))


def _padded(series: Sequence[np.ndarray]) -> np.ndarray:
    """Series of any lengths as rows aligned at their newest value, NaN before."""
    width = max((len(x) for x in series), default=0) or 1
    out = np.full((len(series), width), np.nan)
    for i, x in enumerate(series):
        if len(x):
            out[i, width - len(x) :] = x
    return out


def break_points(series: Sequence[np.ndarray]) -> list[tuple[int, ...]]:
    """Change points of each log series (index of each new segment's first value): the
    segmentation with the least squared error plus a penalty per change (`cuts.own_cuts`,
    all series at once)."""
    if not series:
        return []
    padded = _padded(series)
    found = cuts.own_cuts(padded)
    width = padded.shape[1]
    return [
        tuple(int(p) - (width - len(x)) for p in np.nonzero(row)[0])
        for x, row in zip(series, found, strict=True)
    ]


def joint_breaks(columns: Sequence[np.ndarray]) -> tuple[int, ...]:
    """Change points shared by several series of equal length (one config's points and
    metrics over the same runs): a new image moves them all at once, which shows even when
    each moved by less than its own penalty, e.g. in main's newest run alone
    (`cuts.joint_cuts`)."""
    if not columns:
        return ()
    block = np.column_stack([np.asarray(x, dtype=float) for x in columns])[None, :, :]
    found = cuts.joint_cuts(block, np.array([block.shape[1]]))
    return tuple(int(p) for p in np.nonzero(found[0])[0])


def _inliers(x: np.ndarray) -> np.ndarray:
    """The values left after dropping outliers. The MAD of a few values is often far below
    the scatter, so a value beyond OUTLIER robust deviations is only a suspect: it is
    dropped when it also lies outside the prediction interval (Student's t, two-sided
    OUTLIER_ALPHA over the series) of the values that are not suspects. With a handful of
    values nothing can be told apart, and nothing is dropped."""
    if len(x) < 3:
        return x
    med = _median(x.tolist())
    dev = np.abs(x - med)
    scale = _MADN * _median(dev.tolist())
    if scale <= _TINY:
        scale = float(np.std(x))
    suspect = dev > OUTLIER * scale + _TINY
    if not suspect.any():
        return x
    rest = x[~suspect]
    if len(rest) < 3:
        return x
    sd = float(rest.std(ddof=1))
    limit = critical(len(rest) - 1, OUTLIER_ALPHA / (2 * len(x)))
    beyond = np.abs(x - rest.mean()) > limit * sd * math.sqrt(1 + 1 / len(rest)) + _TINY
    kept: np.ndarray = x[~(suspect & beyond)]
    return kept


def level(x: np.ndarray, breaks: tuple[int, ...]) -> Level:
    """Main's level and scatter from a log series and its change points."""
    if len(x) < 2:  # one run: its value, no scatter (the common case of one baseline run)
        return Level(float(x[0]), 1, None, 0, (), 1)
    starts = (0, *breaks)
    ends = (*breaks, len(x))
    newest = _inliers(x[starts[-1] :])
    center = float(newest.mean())
    sigma: float | None = None
    df = 0
    if len(newest) >= MIN_HISTORY:
        sigma, df = float(newest.std(ddof=1)), len(newest) - 1
        squares, count = sigma * sigma * df, df
    else:
        squares, count = 0.0, 0
        for start, end in zip(starts, ends, strict=True):
            kept = _inliers(x[start:end])
            if len(kept) >= 2:
                squares += float(((kept - kept.mean()) ** 2).sum())
                count += len(kept) - 1
        if count >= MIN_HISTORY - 1:
            sigma, df = math.sqrt(squares / count), count
    return Level(center, len(newest), sigma, df, breaks, len(x), squares, count)


def levels(series: Sequence[np.ndarray]) -> list[Level]:
    return [level(x, b) for x, b in zip(series, break_points(series), strict=True)]


@cache
def critical(df: int | None, alpha: float | None = None) -> float:
    """One-sided critical value at `alpha` (default ALPHA): Student's t with `df` degrees of
    freedom (a prediction interval for one new run), the normal quantile when the scatter
    is assumed."""
    alpha = ALPHA if alpha is None else alpha
    if df is None or df > 10_000:
        return NormalDist().inv_cdf(1 - alpha)
    return tdist.t_quantile(1 - alpha, max(df, 1))


def pooled(found: Sequence[Level]) -> tuple[float | None, int]:
    """One scatter for several series judged together (a config's points, one metric).
    Series too short for a scatter of their own count too: three main runs of eight
    points are 16 degrees of freedom, evidence enough to replace the assumed noise."""
    squares = sum(lv.squares for lv in found)
    df = sum(lv.dof for lv in found)
    return (math.sqrt(squares / df), df) if df >= MIN_HISTORY - 1 else (None, 0)


@dataclass(frozen=True)
class Band:
    """How far a new run may land from main's level and still be noise, in percent."""

    pct: float
    sigma: float  # relative scatter used
    assumed: bool  # True: DEFAULT_NOISE, main's history was too short


def band(lv: Level, pool: tuple[float | None, int], floor_pct: float) -> Band:
    """The larger of the floor and the prediction interval for one new value: the critical
    value x scatter x sqrt(1 + 1/k) (main's level is itself a mean of k runs). The scatter is
    the larger of the series' own and its config's pooled one, judged with the pooled
    degrees of freedom."""
    own = lv.sigma
    pool_sigma, pool_df = pool
    candidates = [s for s in (own, pool_sigma) if s is not None]
    if candidates:
        sigma, df, assumed = max(candidates), max(pool_df, lv.df), False
    else:
        sigma, df, assumed = DEFAULT_NOISE, None, True
    width = 100.0 * critical(df) * sigma * math.sqrt(1 + 1 / max(lv.k, 1))
    return Band(max(floor_pct, width), sigma, assumed)
