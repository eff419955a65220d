"""Where main's series stepped: each series' own change points and its config's joint ones,
all at once (`infx.results.noise.segments`), keeping only sharp steps.

- **Own cuts**: optimal partitioning with penalty PENALTY x sigma^2 x ln n (sigma from the
  first differences, which a step moves once), segments of at least MIN_SEGMENT values.
- **Joint cuts**: a config's series measured in every run of its window, standardized and
  clipped at JOINT_CLIP, cut together at a penalty a split of pure noise passes with
  probability JOINT_ALPHA (the columns' correlation, which the run effect makes large,
  widens it: Satterthwaite's scaled chi-square); segments of one run allowed (a new image
  in main's newest run).
- **Sharp**: a cut stays only where the SHARP_WINDOW values on each side of it differ
  beyond noise (chi-square at SHARP_ALPHA): a step is a jump; a slow drift, which the
  search also approximates by steps, is not cut (the level stays the window's mean, and
  `fit` follows the drift as main's recent level).
"""

from __future__ import annotations

import numpy as np

from infx.results.noise import segments, tdist
from infx.results.noise.effects import RHO
from infx.results.noise.segments import quiet

MIN_SEGMENT = 2  # a series alone is never cut into a segment of one value
MIN_JOINT_SEGMENT = 1  # a whole config may be (a new image in main's newest run)
PENALTY = 5.0  # change-point penalty factor (x sigma^2 x ln n)
JOINT_ALPHA = 0.001  # chance that noise alone cuts a config's joint series
JOINT_CLIP = 4.0
ROBUST_DIFFS = 12  # first differences before their MAD estimates a series' noise
RHO_PRIOR = 6.0  # pseudo differences behind the correlation assumed for a joint cut
SHARP_WINDOW = 3
# The least noise a series is credited with (a tenth of the 2 % assumed without history).
SCALE_FLOOR = 0.002
SHARP_ALPHA = 0.01
_TINY = 1e-6


def own_cuts(flat: np.ndarray) -> np.ndarray:
    """(series, runs) -> each series' own change points (True: a segment starts there)."""
    n = (~np.isnan(flat)).sum(axis=1)
    scale = np.maximum(segments.diff_scale(flat, ROBUST_DIFFS), SCALE_FLOOR)
    penalty = PENALTY * scale * scale * np.log(np.maximum(n, 2))
    cuttable = n >= 2 * MIN_SEGMENT + 1
    cuts = np.zeros(flat.shape, dtype=bool)
    if cuttable.any():
        cuts[cuttable] = segments.partition(
            flat[cuttable][:, :, None], penalty[cuttable], MIN_SEGMENT
        )
    limit = tdist.chi2_isf(SHARP_ALPHA, 1)
    for r in np.nonzero(cuts.any(axis=1))[0]:
        at = np.nonzero(~np.isnan(flat[r]))[0]
        starts = [int(np.searchsorted(at, p)) for p in np.nonzero(cuts[r])[0]]
        kept = _sharp(flat[r, at][:, None], starts, limit, float(scale[r]) ** 2)
        cuts[r] = False
        cuts[r, at[kept]] = True
    return cuts


def _sharp(values: np.ndarray, starts: list[int], limit: float, var: float) -> list[int]:
    """The cuts (indexes into `values`, rows of columns) whose SHARP_WINDOW values on each
    side differ beyond `limit` (their squared differences summed over columns, over `var`
    per column x (1/left + 1/right)). A cut dropped merges its segments, so the next cut's
    left side may reach further back."""
    kept: list[int] = []
    previous = 0
    ends = [*starts[1:], len(values)]
    for start, end in zip(starts, ends, strict=True):
        left = values[max(previous, start - SHARP_WINDOW) : start]
        right = values[start : min(end, start + SHARP_WINDOW)]
        if not len(left) or not len(right):
            continue
        jump = right.mean(axis=0) - left.mean(axis=0)
        spread = var * (1 / len(left) + 1 / len(right))
        if float((jump * jump).sum()) / spread > limit:
            kept.append(start)
            previous = start
    return kept


def joint_cuts(columns: np.ndarray, window: np.ndarray) -> np.ndarray:
    """(configs, runs, series) -> each config's shared change points, from its series
    measured in every run of its window (the newest `window` runs), each scaled by its
    first-difference noise (never below the config's typical one) and clipped at
    JOINT_CLIP."""
    configs, runs, _ = columns.shape
    complete = (~np.isnan(columns)).sum(axis=1) == window[:, None]  # (C, K)
    complete &= window[:, None] >= 2 * MIN_JOINT_SEGMENT + 1
    flat = np.moveaxis(columns, 2, 1).reshape(-1, runs)  # (C*K, N)
    scale = np.maximum(segments.diff_scale(flat, ROBUST_DIFFS), SCALE_FLOOR)
    scale = scale.reshape(configs, -1)
    with quiet():
        typical = np.nanmedian(np.where(complete, scale, np.nan), axis=1)
        center = np.nanmedian(columns, axis=1)  # (C, K)
    scale = np.maximum(scale, np.nan_to_num(typical, nan=10 * SCALE_FLOOR)[:, None])
    block = np.clip((columns - center[:, None, :]) / scale[:, None, :], -JOINT_CLIP, JOINT_CLIP)
    block = np.where(complete[:, None, :], block, 0.0)
    inside = np.arange(runs)[None, :] >= runs - window[:, None]  # (C, N)
    block = np.where(inside[:, :, None], block, np.nan)
    count = complete.sum(axis=1)
    cuts = np.zeros((configs, runs), dtype=bool)
    live = count > 0
    if live.any():
        rho = _correlation(block, complete, window)
        penalty = np.array(
            [
                _joint_penalty(int(w), int(k), float(r))
                for w, k, r in zip(window[live], count[live], rho[live], strict=True)
            ]
        )
        cuts[live] = segments.partition(block[live], penalty, MIN_JOINT_SEGMENT)
        for c in np.nonzero(cuts.any(axis=1))[0]:
            first = runs - int(window[c])
            starts = [int(p) - first for p in np.nonzero(cuts[c])[0]]
            cols = block[c, first:][:, complete[c]]
            k, r = int(count[c]), float(rho[c])
            limit = _joint_penalty_at(SHARP_ALPHA, k, r)
            kept = _sharp(cols, starts, limit, 1.0)
            cuts[c] = False
            cuts[c, [first + p for p in kept]] = True
    return cuts


def _correlation(block: np.ndarray, complete: np.ndarray, window: np.ndarray) -> np.ndarray:
    """Mean correlation between a config's standardized columns, from the mean of their
    first differences in each run: its variance is 2 (1 + (K - 1) rho) / K. Estimated
    robustly (median of the squares over 0.455, the median of chi-square(1)), so a step,
    which moves one difference of every column, does not pass for correlation; shrunk
    toward RHO with RHO_PRIOR pseudo differences."""
    d = np.diff(np.where(complete[:, None, :], block, np.nan), axis=1)
    k = complete.sum(axis=1)
    with quiet():
        mean = np.nanmean(d, axis=2)  # (C, N-1): NaN outside the window
        var = np.nanmedian(mean * mean, axis=1) / 0.4549
    rho = (k * var / 2 - 1) / np.maximum(k - 1, 1)
    rho = np.clip(np.nan_to_num(rho, nan=RHO), 0.0, 0.95)
    n = np.maximum(window - 1, 0)
    out: np.ndarray = (n * rho + RHO_PRIOR * RHO) / (n + RHO_PRIOR)
    return out


def _joint_penalty(window: int, columns: int, rho: float) -> float:
    """The chi-square quantile one split of pure noise passes with probability
    JOINT_ALPHA / (window - 1), for `columns` standardized columns correlated at `rho`:
    their squared sum is about c x chi-square(columns / c), c = 1 + rho^2 (columns - 1)
    (Satterthwaite), far wider than chi-square(columns) when the runs' points move
    together."""
    return _joint_penalty_at(JOINT_ALPHA / (window - 1), columns, rho)


def _joint_penalty_at(alpha: float, columns: int, rho: float) -> float:
    c = 1 + rho * rho * (columns - 1)
    return c * tdist.chi2_isf(alpha, max(columns / c, 1.0))
