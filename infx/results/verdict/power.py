"""What a comparison could have seen, and what would settle what it could not.

- **band** of a point's check: how far that point alone must move to be flagged in this
  sweep, by its own test or through its config's mean (whichever flags first), at the
  level one discovery needs (q over the configs tested, the test's weight inside its
  config); never below the threshold. An advisory line's band: its own scatter, Student's
  t with at most TAIL_DF degrees of freedom, at the level of a point test.
- **detectable**: the smallest change flagged with probability POWER: the same with the
  POWER quantile added (the normal approximation to the noncentral t). For a config, the
  config-wide change its mean test flags with that probability.
- **repeats**: for an unconfirmed config, the fewest runs of this PR in all whose
  detectable change is at or below what this run measured (on the test that came
  closest), up to MAX_REPEATS; -1 when even that many would not do (main's own scatter
  and history bound it).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from infx.results.noise.model import Model
from infx.results.noise.series import GATED, SIGNS
from infx.results.noise.tdist import t_ppf
from infx.results.verdict.decide import ADVISORY_ALPHA, TAIL_DF, Decision

POWER = 0.8
MAX_REPEATS = 10


def worse_pct(log: np.ndarray, sign: np.ndarray) -> np.ndarray:
    """A change of `log` (>= 0) in the worse direction, as a positive percent. A series too
    noisy to bound reads as an infinite band (np.where computes both sides, so a huge log
    overflows on the side not taken): no warning for the user's terminal."""
    with np.errstate(over="ignore"):
        out: np.ndarray = np.where(sign > 0, -np.expm1(-log), np.expm1(log)) * 100
    return out


@dataclass(frozen=True)
class Power:
    band: np.ndarray  # (C, J, M) percent (advisory lines too)
    detectable: np.ndarray  # (C, J, M) percent
    mean_band: np.ndarray  # (C, M) percent, a config-wide change
    mean_detectable: np.ndarray  # (C, M)
    mean_noise: np.ndarray  # (C, M) percent: the config-wide change's standard error
    runs: np.ndarray  # (C,) this PR's runs (the fewest behind any of its points)
    repeats: np.ndarray  # (C,) runs in all that would settle it; 0: not asked; -1: too many
    advisory: np.ndarray  # (C, J, M) an advisory line beyond its band (said, not counted)


def _levels(decision: Decision) -> tuple[np.ndarray, np.ndarray]:
    """(C,) the one-sided level of one config test and one point test, were the config
    the sweep's only discovery."""
    base = decision.base
    tested = max(int((decision.tests > 0).sum()), 1)
    cfg, pt = base.weights()
    return base.q / tested / cfg, base.q / tested / pt


def power(decision: Decision, model: Model, threshold: float) -> Power:
    base = decision.base
    sign = SIGNS[None, None, :]
    a_cfg, a_pt = _levels(decision)
    shape = model.point_sd.shape
    n = np.maximum(model.n, 1).astype(float)[:, None, None]
    # a point's own test, on its residual: a change d of one point moves it by d (1 - w)
    w = np.clip(model.weight, 1e-9, 1.0)
    se_pt = model.point_sd * np.sqrt(1 / base.runs + 1 / n)
    a = np.broadcast_to(np.nan_to_num(a_pt, nan=0.0)[:, None, None], shape)
    crit_pt = t_ppf(1 - np.clip(a, 1e-300, 0.5), np.maximum(model.point_df, 1))
    lift_pt = t_ppf(np.full(shape, POWER), np.maximum(model.point_df, 1))
    own = np.where(base.tested, se_pt / np.maximum(1 - w, 1e-9), np.inf)
    # ... or its config's mean: a change d of one point moves it by d w
    se_cfg = base.run_sd * np.sqrt(1 / base.k + 1 / n[:, :, 0])  # (C, M)
    a_c = np.broadcast_to(a_cfg[:, None], se_cfg.shape)
    crit_cfg = t_ppf(1 - np.clip(a_c, 1e-300, 0.5), np.maximum(base.run_df, 1))
    lift_cfg = t_ppf(np.full(se_cfg.shape, POWER), np.maximum(base.run_df, 1))
    via = se_cfg[:, None, :] / w
    band_log = np.minimum(crit_pt * own, crit_cfg[:, None, :] * via)
    reach_log = np.minimum((crit_pt + lift_pt) * own, (crit_cfg + lift_cfg)[:, None, :] * via)
    # advisory lines: their own scatter, heavy-tailed, each at its own level
    tail_df = np.minimum(np.maximum(model.point_df, 1), TAIL_DF)
    crit_adv = t_ppf(np.full(shape, 1 - ADVISORY_ALPHA / 2), tail_df)
    adv_log = crit_adv * se_pt
    band_log = np.where(base.shown, adv_log, band_log)
    judged = base.valid | base.shown
    band = np.where(judged, np.maximum(threshold, worse_pct(band_log, sign)), np.nan)
    detectable = np.where(base.valid, np.maximum(threshold, worse_pct(reach_log, sign)), np.nan)
    pct = np.expm1(base.x) * 100
    advisory = base.shown & (np.abs(pct) > band)
    have = base.count > 0
    sign_m = SIGNS[None, :]
    mean_band = np.where(have, np.maximum(threshold, worse_pct(crit_cfg * se_cfg, sign_m)), np.nan)
    mean_detectable = np.where(
        have, np.maximum(threshold, worse_pct((crit_cfg + lift_cfg) * se_cfg, sign_m)), np.nan
    )
    with np.errstate(invalid="ignore"):
        runs = np.nanmin(np.where(base.valid, base.runs, np.nan).reshape(len(a_cfg), -1), axis=1)
    runs = np.where(np.isfinite(runs), runs, 1.0)
    need = _repeats(decision, model, a_cfg, a_pt, runs)
    return Power(
        band=band,
        detectable=detectable,
        mean_band=mean_band,
        mean_detectable=mean_detectable,
        mean_noise=np.where(have & GATED[None, :], np.expm1(se_cfg) * 100, np.nan),
        runs=runs.astype(int),
        repeats=need,
        advisory=advisory,
    )


def _repeats(
    decision: Decision, model: Model, a_cfg: np.ndarray, a_pt: np.ndarray, runs: np.ndarray
) -> np.ndarray:
    """Runs in all (R) at which the unconfirmed regression's closest test would reach its
    estimate with POWER: est >= (crit + lift) x scale x sqrt(1/R + 1/n), solved for 1/R."""
    base = decision.base
    side = decision.regressed
    cfg_w, pt_w = base.weights()
    out = np.zeros(len(runs), dtype=int)
    for c in np.nonzero(side.suggested)[0]:
        by_cfg = float(np.nanmin(np.append(side.tests.means[c], np.inf))) * cfg_w[c]
        by_pt = float(np.nanmin(np.append(side.tests.points[c].ravel(), np.inf))) * pt_w[c]
        if by_cfg <= by_pt:
            m = int(
                np.nanargmin(np.where(np.isnan(side.tests.means[c]), np.inf, side.tests.means[c]))
            )
            est = abs(float(base.mean[c, m]))
            scale, df, alpha = base.run_sd[c, m], base.run_df[c, m], a_cfg[c]
            lag = 1 / max(float(model.n[c]), 1.0)
        else:
            flat = np.where(np.isnan(side.tests.points[c]), np.inf, side.tests.points[c])
            at = np.unravel_index(int(np.argmin(flat)), flat.shape)
            j, m = int(at[0]), int(at[1])
            est = abs(float(base.resid[c, j, m]))
            scale, df = model.point_sd[c, j, m], model.point_df[c, j, m]
            lag, alpha = 1 / max(float(model.n[c]), 1.0), a_pt[c]
        df = max(float(df), 1.0)
        reach = float(
            t_ppf(np.array(1 - alpha), np.array(df)) + t_ppf(np.array(POWER), np.array(df))
        )
        room = (est / (reach * float(scale))) ** 2 - float(lag)
        need = int(np.ceil(1 / room)) if room > 0 else MAX_REPEATS + 1
        out[c] = max(need, int(runs[c]) + 1) if need <= MAX_REPEATS else -1
    return out


def bands_alone(model: Model, threshold: float, q: float) -> np.ndarray:
    """(C, J, M) percent: the band `compare` gives each point of one run of a PR whose sweep
    holds its config alone (the results site shows it beside main's scatter): the change of
    that point alone flagged by its own test or through its config's mean, at the weights
    a one-config sweep gives them; advisory lines their own heavy-tailed band."""
    from infx.results.verdict.decide import SHARE

    shape = model.point_sd.shape
    n = np.maximum(model.n, 1).astype(float)[:, None, None]
    judged = np.isfinite(model.center) & np.isfinite(model.point_sd)
    gated = judged & GATED[None, None, :]
    count = gated.sum(axis=1)  # (C, M)
    cfg_tests = (count > 0).sum(axis=1)
    pt_tests = np.where(count >= 2, count, 0).sum(axis=1)
    share = np.where(pt_tests > 0, SHARE, 1.0)
    a_cfg = q * share / np.maximum(cfg_tests, 1)
    a_pt = np.where(pt_tests > 0, q * (1 - SHARE) / np.maximum(pt_tests, 1), 0.0)
    w = np.clip(model.weight, 1e-9, 1.0)
    se_pt = model.point_sd * np.sqrt(1 + 1 / n)
    a = np.broadcast_to(a_pt[:, None, None], shape)
    crit_pt = t_ppf(1 - np.clip(a, 1e-300, 0.5), np.maximum(model.point_df, 1))
    own = np.where((count >= 2)[:, None, :], se_pt / np.maximum(1 - w, 1e-9), np.inf)
    se_cfg = model.run_sd * np.sqrt(1 + 1 / n[:, :, 0])
    a_c = np.broadcast_to(a_cfg[:, None], se_cfg.shape)
    crit_cfg = t_ppf(1 - np.clip(a_c, 1e-300, 0.5), np.maximum(model.run_df, 1))
    band_log = np.minimum(crit_pt * own, (crit_cfg * se_cfg)[:, None, :] / w)
    tail_df = np.minimum(np.maximum(model.point_df, 1), TAIL_DF)
    adv = t_ppf(np.full(shape, 1 - ADVISORY_ALPHA / 2), tail_df) * se_pt
    band_log = np.where(GATED[None, None, :], band_log, adv)
    sign = SIGNS[None, None, :]
    out: np.ndarray = np.where(judged, np.maximum(threshold, worse_pct(band_log, sign)), np.nan)
    return out
