"""Change points of many series at once: the segmentation with the least squared error plus
a penalty per change (optimal partitioning, the exact search PELT prunes), in NumPy over a
whole array of series.

A series is a row of an array over run positions, NaN where that run did not measure it; a
block is several such rows that must be cut together (a config's series over the same runs).
Segments count observed values only, so a series with gaps is cut between the values it
has, and a break falls at the first run position after the last value of the old level.

This replaces ruptures' `KernelCPD` (linear kernel, L2 cost), which gave the same cuts one
series at a time; importing ruptures alone took about 1.9 s.
"""

from __future__ import annotations

import math
import warnings
from collections.abc import Iterator
from contextlib import contextmanager

import numpy as np

from infx.results.noise.median import nanmedian

_MADN = 1.4826  # MAD -> standard deviation for normal data


@contextmanager
def quiet() -> Iterator[None]:
    """All-NaN slices are expected (series a run did not measure): no warnings."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        yield


def partition(values: np.ndarray, penalty: np.ndarray, min_size: int) -> np.ndarray:
    """Cuts of each block: `values` is (blocks, runs, columns) with NaN where a run is
    missing (the same runs in every column of a block), `penalty` one per block. Returns a
    (blocks, runs) boolean array, True where a new segment starts (never at run 0)."""
    blocks, runs, _ = values.shape
    seen = ~np.isnan(values[:, :, 0])
    filled = np.where(np.isnan(values), 0.0, values)
    zeros = np.zeros((blocks, 1))
    count = np.concatenate([zeros, np.cumsum(seen, axis=1)], axis=1)  # (B, R+1)
    s1 = np.concatenate([np.zeros((blocks, 1, values.shape[2])), np.cumsum(filled, 1)], 1)
    s2 = np.concatenate([zeros, np.cumsum((filled * filled).sum(axis=2), axis=1)], axis=1)
    best = np.full((blocks, runs + 1), np.inf)
    best[:, 0] = -penalty
    back = np.zeros((blocks, runs + 1), dtype=int)
    for end in range(1, runs + 1):
        n = count[:, end, None] - count[:, :end]  # (B, end) values in [start, end)
        sums = s1[:, end, None, :] - s1[:, :end, :]
        with np.errstate(divide="ignore", invalid="ignore"):
            cost = (s2[:, end, None] - s2[:, :end]) - (sums * sums).sum(axis=2) / n
        total = np.where(n >= min_size, best[:, :end] + cost + penalty[:, None], np.inf)
        start = np.argmin(total, axis=1)
        best[:, end] = total[np.arange(blocks), start]
        back[:, end] = start
    cuts = np.zeros((blocks, runs), dtype=bool)
    at = np.full(blocks, runs)
    rows = np.arange(blocks)
    for _ in range(runs):
        live = at > 0
        if not live.any():
            break
        start = np.where(live, back[rows, at], 0)
        mark = live & (start > 0) & np.isfinite(best[rows, at])
        cuts[rows[mark], start[mark]] = True
        at = np.where(live, start, 0)
    return cuts


def compact(values: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Each row's observed values moved to its front (order kept), NaN after; and counts."""
    seen = ~np.isnan(values)
    order = np.argsort(~seen, axis=1, kind="stable")
    packed = np.take_along_axis(values, order, axis=1)
    return packed, seen.sum(axis=1)


def diff_scale(values: np.ndarray, robust_diffs: int) -> np.ndarray:
    """Noise of each row from its first differences (between observed values): with
    `robust_diffs` differences or more their MAD / sqrt(2), which a step moves by one
    difference only; below that their root mean square / sqrt(2), which a step can only
    inflate (the MAD of a handful of differences is far too often near zero). 0 for rows
    with fewer than 3 values."""
    packed, n = compact(values)
    d = np.diff(packed, axis=1)  # NaN beyond each row's n - 1 differences
    with quiet():
        rms = np.sqrt(np.nanmean(d * d, axis=1) / 2)
        mid = nanmedian(d, axis=1)
        mad = _MADN * nanmedian(np.abs(d - mid[:, None]), axis=1) / math.sqrt(2)
    out = np.where(n - 1 >= robust_diffs, mad, rms)
    result: np.ndarray = np.where(n >= 3, np.nan_to_num(out), 0.0)
    return result
