"""Main's level and scatter of every series of a comparison at once.

The values arrive as one array (configs, runs, concurrencies, metrics) of logs, NaN where a
run did not measure a point, each config's runs aligned at its newest (`infx.results.noise.series`
builds it). Per series (one metric of one point):

1. **Cuts**: its config's joint change points (`infx.results.noise.cuts`): main's level moves
   where its config moves (a new image, a driver). A step of one series alone (TTFT at
   one concurrency on a machine whose queueing shifted) is the series wandering: it stays
   in the scatter rather than making a new level of a few runs.
2. **Outliers** within each segment: beyond OUTLIER robust deviations from the median and
   outside the others' prediction interval (t, two-sided OUTLIER_ALPHA over the segment).
3. **Level**: the mean of the newest segment holding MIN_LEVEL values or more (established).
   A newer, shorter segment is *provisional*: main's newest run(s) moved, but a level never
   rests on fewer than MIN_LEVEL runs; how far they moved is kept (`moved`, `k_moved`). A
   series with no segment of MIN_LEVEL values is not cut at all.
4. **Scatter**: the within-segment residuals of all its segments (own degrees of freedom),
   shrunk toward its config's trend of log variance against log concurrency, fitted per
   config and metric, weighted by degrees of freedom (limma's moderated variance): sigma^2
   = (df s^2 + d0 prior) / (df + d0), judged with df + d0 degrees of freedom. d0 = PRIOR_DF,
   never more than the degrees of freedom the trend rests on. Below MIN_DF degrees of
   freedom for a whole config and metric, DEFAULT_NOISE is assumed (normal, flagged).
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from infx.results.noise import cuts, tdist
from infx.results.noise.segments import quiet

DEFAULT_NOISE = 0.02  # InferenceX's "normal variance +-2 %", when nothing shows the scatter
MIN_LEVEL = 3  # values an established level needs; a newer, shorter segment is provisional
OUTLIER = 5.0
OUTLIER_ALPHA = 0.001  # chance that one series of pure noise loses a value as an outlier
PRIOR_DF = 4.0  # d0: calibrated on the H200 runs (docs/results.md)
MIN_DF = 4  # degrees of freedom (a config's, one metric) below which the noise is assumed
# A level drifting beyond this (its slope's t, two-sided) over DRIFT_MIN runs or more has
# a recent level, the trend's at main's newest run, that a flagged change must clear too.
DRIFT_ALPHA = 0.01
DRIFT_MIN = 6
# Trend points further than this many standard deviations of their log variance from the
# first fit are left out of the second: one wild point does not tilt its config's prior.
TREND_OUTLIER = 3.0
_MADN = 1.4826
_TINY = 1e-6
_FLOOR = 1e-4  # scatter floor (log units): a history that never moved is not infinitely sure


@dataclass(frozen=True)
class Fit:
    """Main's level and scatter per series; arrays (configs, concurrencies, metrics) unless
    said. Log units throughout."""

    center: np.ndarray  # established level; NaN: no history for the series
    k: np.ndarray  # values behind it
    moved: np.ndarray  # provisional level minus the established one (NaN: none)
    k_moved: np.ndarray  # values of the provisional segment (0: none)
    own: np.ndarray  # own within-segment scatter (NaN: no degrees of freedom)
    own_df: np.ndarray
    sigma: np.ndarray  # the scatter judged with
    df: np.ndarray  # its degrees of freedom (inf: assumed, normal)
    assumed: np.ndarray  # (configs, metrics): DEFAULT_NOISE assumed
    resid: np.ndarray  # (configs, runs, conc, metrics): residual / sigma of inliers, else NaN
    joint: np.ndarray  # (configs, runs): the config's shared change points
    segments: np.ndarray  # (configs, metrics): most segments of a series (for residual df)


def _segment_ids(x: np.ndarray, cuts: np.ndarray) -> np.ndarray:
    """Segment of each run position; a series none of whose segments holds MIN_LEVEL
    values is not cut."""
    seen = ~np.isnan(x)
    ids = np.cumsum(cuts, axis=1)
    most = int(ids.max(initial=0)) + 1
    enough = np.zeros(len(x), dtype=bool)
    for g in range(most):
        enough |= ((ids == g) & seen).sum(axis=1) >= MIN_LEVEL
    ids[~enough] = 0
    return ids


def _outliers(x: np.ndarray, ids: np.ndarray) -> np.ndarray:
    """Values to drop: per segment, beyond OUTLIER robust deviations from its median and
    outside the prediction interval of its other values (t, OUTLIER_ALPHA two-sided over
    the segment); a segment of fewer than 3 values, or with fewer than 3 others, keeps all."""
    seen = ~np.isnan(x)
    drop = np.zeros(x.shape, dtype=bool)
    for g in range(int(ids.max(initial=0)) + 1):
        member = seen & (ids == g)
        n = member.sum(axis=1)
        rows = np.nonzero(n >= 3)[0]
        if not len(rows):
            continue
        xs = np.where(member[rows], x[rows], np.nan)
        with quiet():
            med = np.nanmedian(xs, axis=1)
            dev = np.abs(xs - med[:, None])
            scale = _MADN * np.nanmedian(dev, axis=1)
            scale = np.where(scale <= _TINY, np.nanstd(xs, axis=1), scale)
        suspect = member[rows] & (dev > OUTLIER * scale[:, None] + _TINY)
        if not suspect.any():
            continue
        rest = member[rows] & ~suspect
        m = rest.sum(axis=1)
        ok = m >= 3
        if not ok.any():
            continue
        r = np.where(rest, xs, np.nan)
        with quiet():
            mean, sd = np.nanmean(r, axis=1), np.nanstd(r, axis=1, ddof=1)
        limit = tdist.t_ppf(1 - OUTLIER_ALPHA / (2 * n[rows]), np.maximum(m - 1, 1).astype(float))
        reach = limit * sd * np.sqrt(1 + 1 / np.maximum(m, 1)) + _TINY
        beyond = np.abs(xs - mean[:, None]) > reach[:, None]
        drop[rows] = suspect & beyond & ok[:, None]
    return drop


@dataclass(frozen=True)
class Series:
    center: np.ndarray
    k: np.ndarray
    moved: np.ndarray
    k_moved: np.ndarray
    squares: np.ndarray
    df: np.ndarray
    resid: np.ndarray  # (S, N) within-segment residual of inliers, NaN otherwise
    count: np.ndarray  # segments holding values


def levels(x: np.ndarray, cuts: np.ndarray) -> Series:
    """Established and provisional levels, within-segment squares and residuals."""
    ids = _segment_ids(x, cuts)
    kept = ~np.isnan(x) & ~_outliers(x, ids)
    most = int(ids.max(initial=0)) + 1
    rows = len(x)
    counts = np.zeros((rows, most))
    means = np.zeros((rows, most))
    squares = np.zeros(rows)
    resid = np.full(x.shape, np.nan)
    filled = np.where(kept, x, 0.0)
    for g in range(most):
        member = kept & (ids == g)
        n = member.sum(axis=1)
        mean = np.where(n > 0, (filled * member).sum(axis=1) / np.maximum(n, 1), 0.0)
        dev = np.where(member, x - mean[:, None], np.nan)
        resid = np.where(member, dev, resid)
        squares += np.nansum(dev * dev, axis=1)
        counts[:, g], means[:, g] = n, mean
    at = np.arange(most)[None, :]
    established = np.max(np.where(counts >= MIN_LEVEL, at, -1), axis=1)
    newest = np.max(np.where(counts >= 1, at, -1), axis=1)
    established = np.where(established < 0, newest, established)
    pick = np.clip(established, 0, None)
    r = np.arange(rows)
    has = newest >= 0
    center = np.where(has, means[r, pick], np.nan)
    k = np.where(has, counts[r, pick], 0)
    provisional = has & (newest > established)
    last = np.clip(newest, 0, None)
    moved = np.where(provisional, means[r, last] - center, np.nan)
    k_moved = np.where(provisional, counts[r, last], 0.0)
    drift, k_drift = _drift(x, kept & (ids == pick[:, None]), center, k)
    drifting = ~provisional & np.isfinite(drift)
    moved = np.where(drifting, drift, moved)
    k_moved = np.where(drifting, k_drift, k_moved)
    df = np.maximum(counts - 1, 0).sum(axis=1)
    return Series(center, k, moved, k_moved, squares, df, resid, (counts > 0).sum(axis=1))


def _drift(
    x: np.ndarray, member: np.ndarray, center: np.ndarray, k: np.ndarray
) -> tuple[np.ndarray, np.ndarray]:
    """Where the established segment drifts (its least-squares slope over run positions
    beyond DRIFT_ALPHA, two-sided, with DRIFT_MIN values or more): the trend's value at its
    newest run minus the level, and the runs a mean would need for the same standard
    error (1 / (1/k + (t - mean t)^2 / Sxx)). NaN and 0 elsewhere."""
    pos = np.arange(x.shape[1], dtype=float)[None, :]
    n = np.maximum(k, 1)
    mean_pos = (pos * member).sum(axis=1) / n
    dp = np.where(member, pos - mean_pos[:, None], 0.0)
    dx = np.where(member, x - center[:, None], 0.0)
    sxx = (dp * dp).sum(axis=1)
    ok = (k >= DRIFT_MIN) & (sxx > 0)
    safe = np.where(ok, sxx, 1.0)
    slope = (dp * dx).sum(axis=1) / safe
    rss = np.maximum((dx * dx).sum(axis=1) - slope * slope * sxx, 0.0)
    se = np.sqrt(rss / np.maximum(k - 2, 1) / safe)
    with np.errstate(divide="ignore", invalid="ignore"):
        t = np.abs(slope) / se
    limit = tdist.t_ppf(np.full(len(k), 1 - DRIFT_ALPHA / 2), np.maximum(k - 2, 1))
    newest = np.max(np.where(member, pos, -1.0), axis=1)
    gap = newest - mean_pos
    found = ok & (t > limit)
    moved = np.where(found, slope * gap, np.nan)
    runs = np.where(found, 1 / (1 / n + gap * gap / safe), 0.0)
    return moved, runs


def _prior(var: np.ndarray, df: np.ndarray, lconc: np.ndarray) -> np.ndarray:
    """Each config's and metric's trend of log variance against log concurrency (weighted
    least squares, weights the degrees of freedom; log s^2 corrected for its bias at few
    degrees of freedom), evaluated at every concurrency. (C, J, M) in, (C, J, M) out."""
    ok = (df > 0) & np.isfinite(var)
    half = np.where(ok, df / 2, 1.0)
    y = np.log(np.maximum(np.where(ok, var, 1.0), _FLOOR**2)) - (tdist.digamma(half) - np.log(half))
    x = np.broadcast_to(lconc[:, :, None], var.shape)
    x = np.where(np.isfinite(x), x, 0.0)
    w = np.where(ok, df, 0.0)
    a, b = _line(x, y, w)
    # again without the points far off the first line (one wild point must not tilt it)
    spread = np.sqrt(tdist.trigamma(half) + float(tdist.trigamma(np.array(PRIOR_DF / 2))))
    off = np.abs(y - (a[:, None, :] + b[:, None, :] * x)) > TREND_OUTLIER * spread
    a, b = _line(x, y, np.where(off, 0.0, w))
    out: np.ndarray = np.exp(a[:, None, :] + b[:, None, :] * x)
    return out


def _line(x: np.ndarray, y: np.ndarray, w: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Weighted line per (config, metric) over concurrencies; its slope only when three
    concurrencies or more carry weight, else the weighted mean."""
    sw = w.sum(axis=1)
    safe = np.where(sw > 0, sw, 1.0)
    mx, my = (w * x).sum(axis=1) / safe, (w * y).sum(axis=1) / safe
    dx = x - mx[:, None, :]
    sxx = (w * dx * dx).sum(axis=1)
    sxy = (w * dx * (y - my[:, None, :])).sum(axis=1)
    points = (w > 0).sum(axis=1)
    slope = np.where((points >= 3) & (sxx > _TINY), sxy / np.where(sxx > _TINY, sxx, 1.0), 0.0)
    return my - slope * mx, slope


def fit(values: np.ndarray, window: np.ndarray, concs: np.ndarray, gating: int) -> Fit:
    """The model of every series: `values` (configs, runs, concurrencies, metrics) of logs
    aligned at each config's newest run, `window` runs per config, `concs` (configs,
    concurrencies) with NaN padding; the first `gating` metrics are judged (the rest are
    shown only, and neither cut the config nor set its prior)."""
    configs, runs, width, metrics = values.shape
    joint = cuts.joint_cuts(values[:, :, :, :gating].reshape(configs, runs, -1), window)
    flat = np.moveaxis(values, 1, 3).reshape(-1, runs)  # (C*J*M, N)
    found_cuts = np.repeat(joint, width * metrics, axis=0)
    found = levels(flat, found_cuts)
    shape = (configs, width, metrics)

    def back(a: np.ndarray) -> np.ndarray:
        return a.reshape(shape)

    own_df = back(found.df).astype(float)
    var = np.where(own_df > 0, back(found.squares) / np.maximum(own_df, 1), np.nan)
    prior = _prior(var, own_df, np.log(concs))
    total = own_df.sum(axis=1)  # (C, M)
    d0 = np.minimum(PRIOR_DF, total)[:, None, :]
    shrunk = (np.nan_to_num(var) * own_df + d0 * prior) / np.maximum(own_df + d0, _TINY)
    assumed = total < MIN_DF
    sigma = np.sqrt(np.maximum(shrunk, _FLOOR**2))
    sigma = np.where(assumed[:, None, :], DEFAULT_NOISE, sigma)
    df = np.where(assumed[:, None, :], math.inf, own_df + d0)
    center = back(found.center)
    sigma = np.where(np.isnan(center), np.nan, sigma)
    resid = np.moveaxis(found.resid.reshape(configs, width, metrics, runs), 3, 1)
    resid = resid / sigma[:, None, :, :]
    return Fit(
        center=center,
        k=back(found.k).astype(float),
        moved=back(found.moved),
        k_moved=back(found.k_moved).astype(float),
        own=np.sqrt(var),
        own_df=own_df,
        sigma=sigma,
        df=df,
        assumed=assumed,
        resid=resid,
        joint=joint,
        segments=back(found.count).max(axis=1, initial=0),
    )
