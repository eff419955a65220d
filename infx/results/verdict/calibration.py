"""How often the verdict is wrong where it is used: main's own runs judged as pull requests.

Leave one run out: each run of a config's level is judged, as one run of a PR would be,
against the level and scatter the config's other runs give (the closed forms of a mean
and a residual with one run removed); a run left out as an outlier is judged against the
level as it stands. The same tests, weights and Benjamini-Hochberg across the configs the
run holds, at the same rate, decide whether that run would have failed the gate. Nothing
changed between main's runs, so every such failure is a false alarm: the count says how
often this model, on this history, fails an unchanged sweep ("of main's last N runs
judged as PRs, k would have failed"), next to the rate the settings name.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass

import numpy as np

from infx.results.noise.model import Model
from infx.results.noise.segments import quiet
from infx.results.noise.series import GATED, SIGNS
from infx.results.noise.tdist import t_cdf
from infx.results.verdict.decide import EDGE, SHARE, bh

MIN_RUNS = 3  # runs of a config's level before its runs are judged one against the others
SIGNIFICANT = 0.05  # how unlikely main's failures must be at the named rate to tighten it
FLOOR = 16  # the rate is never tightened below the named one divided by this


@dataclass(frozen=True)
class Calibration:
    judged: np.ndarray  # (C,) main's runs of the config judged as PRs
    failed: np.ndarray  # (C,) of them, those whose sweep would have failed at this config
    runs: int  # main's runs judged (each with every config it holds)
    sweeps_failed: int  # of them, those that would have failed the gate


def _one_sided(t: np.ndarray, df: np.ndarray, pct: np.ndarray, threshold: float) -> np.ndarray:
    """The regression p-value (1 inside the threshold)."""
    out: np.ndarray = np.where(pct < -(threshold + EDGE), t_cdf(t, np.maximum(df, 1)), 1.0)
    return out


def calibrate(
    model: Model, values: np.ndarray, run_of: np.ndarray, threshold: float, q: float
) -> Calibration:
    """`values` (C, N, J, M) as the model was fitted on, `run_of` (C, N) main's run index of
    each position (-1: none)."""
    g = GATED
    level, out = model.level, model.outlier & ~model.provisional
    n = np.maximum(model.n, 1).astype(float)[:, None]  # (C, 1)
    grow = n / np.maximum(n - 1, 1)  # a run's deviation from the others' mean, not all's
    dev = model.dev[:, :, g]  # (C, N, G) from the level's means
    member = level[:, :, None] & np.isfinite(dev)
    with quiet():
        mean = np.nanmean(np.where(member, dev, np.nan), axis=1)  # (C, G)
    e = np.where(member, dev - mean[:, None, :], 0.0)
    ss = (e * e).sum(axis=1)  # (C, G)
    sd_in = np.sqrt(
        np.maximum(ss[:, None, :] - e * e * grow[:, :, None], 1e-30)
        / np.maximum(n - 2, 1)[:, :, None]
    )
    sd_run = model.run_sd[:, None, g]
    # the PR-to-be's deviation from the others, and the others' scatter
    y = np.where(level[:, :, None], e * grow[:, :, None], dev - mean[:, None, :])
    sd = np.where(level[:, :, None], sd_in, sd_run)
    k = np.where(level, n - 1, n)[:, :, None]
    t = SIGNS[None, None, g] * y / (sd * np.sqrt(1 + 1 / k))
    df = np.where(level[:, :, None], np.maximum(n - 2, 1)[:, :, None], model.run_df[:, None, g])
    pct = SIGNS[None, None, g] * np.expm1(y) * 100
    p_cfg = _one_sided(t, df, pct, threshold)  # (C, N, G)
    # points: each residual after its run's deviation, against the others' residual scatter
    x = values[:, :, :, g] - model.base[:, None, :, g]  # (C, N, J, G)
    resid = x - model.dev[:, :, None, g]
    sd_pt = model.point_sd[:, None, :, g]
    pts = model.points[:, g].astype(float)
    lose = 1 - model.weight[:, None, :, g]  # a point's residual degrees of freedom per run
    df_pt = model.point_df[:, None, :, g]
    n4 = n[:, :, None, None]
    ss_pt = sd_pt * sd_pt * (n4 - 1)  # its residual's squares (point_sd is per run)
    r_in = resid * grow[:, :, None, None]
    left = np.maximum(ss_pt - resid * r_in, 1e-30) / np.maximum(n4 - 2, 1)
    lvl = level[:, :, None, None]
    r = np.where(lvl, r_in, resid)
    s = np.where(lvl, np.sqrt(left), sd_pt)
    k4 = k[:, :, :, None]
    t_pt = SIGNS[None, None, None, g] * r / (s * np.sqrt(1 + 1 / k4))
    df4 = np.where(lvl, np.maximum(df_pt - lose, 1), df_pt)
    total = (
        SIGNS[None, None, None, g] * np.expm1(np.where(lvl, x * grow[:, :, None, None], x)) * 100
    )
    tested = np.isfinite(r) & (pts >= 2)[:, None, None, :] & np.isfinite(sd_pt)
    p_pt = np.where(tested, _one_sided(t_pt, df4, total, threshold), np.nan)
    have = np.isfinite(p_cfg) & np.isfinite(y)
    n_cfg = have.sum(axis=2)
    n_pt = tested.sum(axis=(2, 3))
    share = np.where(n_pt > 0, SHARE, 1.0)
    with quiet():
        best_cfg = np.nanmin(np.where(have, p_cfg, np.nan), axis=2) * n_cfg / share
        best_pt = np.nanmin(p_pt, axis=(2, 3)) * n_pt / (1 - SHARE)
    p = np.fmin(best_cfg, best_pt)
    p = np.minimum(1.0, p)
    # a run left out needs two others to be judged against (a scatter of one degree of freedom)
    judged = (level | out) & (model.n >= MIN_RUNS)[:, None]
    p = np.where(judged & np.isfinite(p), p, np.nan)
    failed = np.zeros(level.shape, dtype=bool)
    sweeps = 0
    fails = 0
    # sorted(set()): np.unique imports numpy.ma (50 ms of a comparison's start) to ask
    # whether a plain array is masked.
    for run in sorted(set(run_of[judged].tolist())):
        at = judged & (run_of == run)
        flagged, _ = bh(p[at], q)
        failed[at] = flagged
        sweeps += 1
        fails += int(flagged.any())
    return Calibration(judged.sum(axis=1), failed.sum(axis=1), sweeps, fails)


def beyond_chance(failed: int, judged: int, q: float) -> float:
    """P(at least `failed` of `judged` unchanged runs fail) when each fails at rate `q`."""
    return sum(
        math.comb(judged, i) * q**i * (1 - q) ** (judged - i) for i in range(failed, judged + 1)
    )


def held(q: float, at: Callable[[float], Calibration]) -> tuple[float, Calibration]:
    """The rate the gate runs at: the named `q`, unless main's own runs, each judged as a PR
    against the others, fail significantly more often than it (one-sided binomial test);
    then halved while they still do and halving fails fewer of them (down to q / FLOOR).
    Runs that fail at any rate are bad runs of main (a flaky node), which no stricter rate
    excuses: tightening for them would only blind the gate."""
    rate, cal = q, at(q)
    while beyond_chance(cal.sweeps_failed, cal.runs, q) < SIGNIFICANT and rate > q / FLOOR:
        tighter = at(rate / 2)
        if tighter.sweeps_failed >= cal.sweeps_failed:
            break
        rate, cal = rate / 2, tighter
    return rate, cal
