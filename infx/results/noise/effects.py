"""Run-level effects: the points of one run move together.

From main's standardized residuals (`Fit.resid`), per metric:

- a config's **run deviation** is the mean of its points' residuals in one run;
- the **sweep-wide effect** of a run is the median of its configs' run deviations, where
  the run holds at least MIN_SWEEP configs (an image, a driver, a machine's day moves them
  all); its variance over main's runs is the sweep's (`sweep_var`);
- a config's **run variance** is the variance of its run deviations less the sweep's
  effect (where known), shrunk toward the pooled ratio to what independent points with
  correlation RHO would give (RUN_PRIOR_DF pseudo degrees of freedom). This is what its
  config-mean test needs: the points of one run are not independent (r = 0.36 to 0.40 on
  the H200 runs, even across configs served by separate processes).
"""

from __future__ import annotations

import math
import warnings
from dataclasses import dataclass

import numpy as np

MIN_SWEEP = 5  # configs a run (or this PR) needs before its sweep-wide effect is estimated
MIN_SWEEP_RUNS = 4  # main runs with a sweep-wide effect before its variance is
RHO = 0.4  # correlation of two points of one run assumed before main's runs show it
RUN_PRIOR_DF = 8.0


@dataclass(frozen=True)
class Effects:
    """Per config and metric unless said; standardized units (a point's scatter is 1)."""

    run_var: np.ndarray  # (configs, metrics) variance of a config's run deviation
    run_df: np.ndarray  # (configs, metrics)
    assumed: np.ndarray  # (configs, metrics): no run of main showed it (RHO assumed)
    sweep_var: np.ndarray  # (metrics,) variance of the sweep-wide effect; NaN: unknown
    sweep_df: np.ndarray  # (metrics,)


def _nanmedian(a: np.ndarray, axis: int) -> np.ndarray:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        out: np.ndarray = np.nanmedian(a, axis=axis)
    return out


def effects(resid: np.ndarray, run_of: np.ndarray, segments: np.ndarray) -> Effects:
    """`resid` (configs, runs, conc, metrics), `run_of` (configs, runs) history index per
    position (-1: none), `segments` (configs, metrics) segments behind the residuals."""
    configs, _, _, metrics = resid.shape
    seen = ~np.isnan(resid)
    points = seen.sum(axis=2)  # (C, N, M)
    with np.errstate(invalid="ignore", divide="ignore"):
        dev = np.where(points > 0, np.where(seen, resid, 0.0).sum(axis=2) / points, np.nan)
    # the sweep-wide effect of each history run: median of its configs' deviations
    total = int(run_of.max(initial=-1)) + 1
    placed = np.full((max(total, 1), configs, metrics), np.nan)
    c_idx, n_idx = np.nonzero(run_of >= 0)
    placed[run_of[c_idx, n_idx], c_idx] = dev[c_idx, n_idx]
    held = (~np.isnan(placed)).sum(axis=1)  # (R, M)
    sweep = np.where(held >= MIN_SWEEP, _nanmedian(placed, axis=1), np.nan)  # (R, M)
    known = ~np.isnan(sweep)
    count = known.sum(axis=0)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        sweep_var = np.where(count >= MIN_SWEEP_RUNS, np.nanvar(sweep, axis=0, ddof=1), np.nan)
    shift = np.zeros(dev.shape)
    shift[c_idx, n_idx] = np.nan_to_num(sweep[run_of[c_idx, n_idx]])
    rel = dev - shift
    n = (~np.isnan(rel)).sum(axis=1)  # (C, M)
    df = np.maximum(n - segments, 0).astype(float)
    own = np.where(df > 0, np.nansum(rel * rel, axis=1) / np.maximum(df, 1), np.nan)
    # what independent-ish points would give: (1 + (J - 1) RHO) / J for J points a run
    typical = np.maximum(np.nanmean(np.where(points > 0, points, np.nan), axis=1), 1.0)
    typical = np.nan_to_num(typical, nan=1.0)
    expected = (1 + (typical - 1) * RHO) / typical
    ratio = own / expected
    have = df > 0
    weight = np.where(have, df, 0.0)
    pooled = (np.nansum(np.where(have, ratio, 0.0) * weight, axis=0) + RUN_PRIOR_DF) / (
        weight.sum(axis=0) + RUN_PRIOR_DF
    )
    shrunk = (np.where(have, ratio * df, 0.0) + RUN_PRIOR_DF * pooled) / (df + RUN_PRIOR_DF)
    return Effects(
        run_var=shrunk * expected,
        run_df=df + RUN_PRIOR_DF,
        assumed=~have,
        sweep_var=sweep_var,
        sweep_df=np.where(count >= MIN_SWEEP_RUNS, count - 1, 0).astype(float),
    )


def sweep_shift(dev: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """This PR's sweep-wide effect per metric: the median of its configs' mean deviations
    (configs, metrics), where at least MIN_SWEEP configs have one; else 0. And how many."""
    have = (~np.isnan(dev)).sum(axis=0)
    shift = np.where(have >= MIN_SWEEP, np.nan_to_num(_nanmedian(dev, axis=0)), 0.0)
    return shift, have


def median_var(run_var: np.ndarray, count: np.ndarray) -> np.ndarray:
    """Variance of the median of `count` configs' deviations (pi/2 x the mean's)."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        mean = np.nanmean(run_var, axis=0)
    out: np.ndarray = math.pi / 2 * mean / np.maximum(count, 1)
    return out
