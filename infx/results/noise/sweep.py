"""The sweep-wide run effect: the configs of one run move together too (an image, a driver,
a machine's day), not only the points of one config.

For a gated metric, each run's sweep effect u is the median over the configs it holds of
their run deviations in their own run scatter (y / s_b), where the run holds MIN_SWEEP
configs or more. Taking s_b u out of a config's deviation leaves what that config did on
its own; its scatter is measured the same way on main's runs (the deviation less s_b u,
over the runs with a sweep effect), so the test of one config is calibrated whatever
share of its run scatter the sweep carries. The sweep effect of this PR is judged apart,
against how far main's runs' effects scatter.

Where few configs are swept (the real H200 sets hold two), nothing of this applies and a
config's own run scatter s_b stands.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from infx.results.noise.median import nanmedian
from infx.results.noise.model import Model
from infx.results.noise.segments import quiet

MIN_SWEEP = 5  # configs a run (and this PR) must hold for its sweep effect to be taken out
MIN_SWEEP_RUNS = 4  # main runs with a sweep effect before its scatter is measured


@dataclass(frozen=True)
class Sweep:
    """Per gated metric (M,) unless said."""

    active: np.ndarray  # the effect is estimated on main and on this PR
    effect: np.ndarray  # this PR's sweep effect (run scatters)
    scatter: np.ndarray  # how far main's runs' effects scatter
    runs: np.ndarray  # main's runs behind it (df + 1)
    configs: np.ndarray  # this PR's configs behind its effect
    run_sd: np.ndarray  # (C, M) a config's run scatter with the sweep's effect out
    run_df: np.ndarray  # (C, M)


def _median(z: np.ndarray, axis: int) -> np.ndarray:
    with quiet():
        out: np.ndarray = nanmedian(z, axis=axis)
    return out


def sweep(model: Model, run_of: np.ndarray, pr_dev: np.ndarray, gated: np.ndarray) -> Sweep:
    """`run_of` (C, N) main's run index of each position (-1: none), `pr_dev` (C, M) this
    PR's pooled deviation of each config (NaN: none)."""
    configs, _, metrics = model.dev.shape
    z = np.where(model.level[:, :, None], model.dev / model.run_sd[:, None, :], np.nan)
    total = int(run_of.max(initial=-1)) + 1
    placed = np.full((max(total, 1), configs, metrics), np.nan)
    c_idx, n_idx = np.nonzero((run_of >= 0) & model.level)
    placed[run_of[c_idx, n_idx], c_idx] = z[c_idx, n_idx]
    held = np.isfinite(placed).sum(axis=1)  # (R, M)
    u_main = np.where(held >= MIN_SWEEP, _median(placed, axis=1), np.nan)  # (R, M)
    runs = np.isfinite(u_main).sum(axis=0)
    with quiet():
        scatter = np.nanstd(u_main, axis=0, ddof=1)
    pr_z = pr_dev / model.run_sd
    have = np.isfinite(pr_z).sum(axis=0)
    effect = np.where(have >= MIN_SWEEP, np.nan_to_num(_median(pr_z, axis=0)), 0.0)
    active = (runs >= MIN_SWEEP_RUNS) & (have >= MIN_SWEEP) & gated & np.isfinite(scatter)
    # each config's run deviation with its run's sweep effect out, on main's runs
    u_at = np.full(model.dev.shape, np.nan)
    u_at[c_idx, n_idx] = u_main[run_of[c_idx, n_idx]]
    rest = np.where(np.isfinite(u_at), model.dev - model.run_sd[:, None, :] * u_at, np.nan)
    count = np.isfinite(rest).sum(axis=1)
    with quiet():
        mean = np.nanmean(rest, axis=1)
        squares = np.nansum((rest - mean[:, None, :]) ** 2, axis=1)
    df = np.maximum(count - 1, 0).astype(float)
    sd = np.sqrt(squares / np.maximum(df, 1))
    usable = active[None, :] & (df >= 1)
    return Sweep(
        active=active,
        effect=np.where(active, effect, 0.0),
        scatter=np.where(active, scatter, np.nan),
        runs=runs,
        configs=have,
        run_sd=np.where(usable, np.maximum(sd, 1e-4), model.run_sd),
        run_df=np.where(usable, df, model.run_df),
    )
