"""What a comparison could have seen, and what would settle what it could not.

- **band**: how far one check must move, alone, to be flagged in this sweep: the t
  quantile at the level one discovery needs (Q over the configs tested, Bonferroni over
  the config's tests, Sidak over its points) x scatter x sqrt(1/R + 1/k); never below
  the threshold.
- **detectable**: the smallest change flagged with probability POWER: the same with the
  POWER quantile added (the usual normal-approximation to the noncentral t). For a config,
  the config-wide change its mean test flags with that probability.
- **repeats**: for an unconfirmed config, the fewest runs of this PR in all whose
  detectable change is at or below what this run measured (on the test that came
  closest), up to MAX_REPEATS; -1 when even that many would not do (main's own scatter
  and history bound it).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from infx.results.noise import effects as fx
from infx.results.noise.fit import Fit
from infx.results.noise.series import GATING, SIGNS
from infx.results.noise.tdist import t_ppf
from infx.results.verdict.decide import Curves, Decision, _min, sidak

POWER = 0.8
MAX_REPEATS = 10


def worse_pct(log: np.ndarray, sign: np.ndarray) -> np.ndarray:
    """A change of `log` (>= 0) in the worse direction, as a positive percent."""
    out: np.ndarray = np.where(sign > 0, -np.expm1(-log), np.expm1(log)) * 100
    return out


@dataclass(frozen=True)
class Power:
    band: np.ndarray  # (C, J, G) percent
    detectable: np.ndarray  # (C, J, G) percent
    mean_band: np.ndarray  # (C, G) percent, a config-wide change
    mean_detectable: np.ndarray  # (C, G)
    mean_noise: np.ndarray  # (C, G) percent: the config-wide change's standard error
    runs: np.ndarray  # (C,) this PR's runs (the fewest behind any of its points)
    repeats: np.ndarray  # (C,) runs in all that would settle it; 0: not asked; -1: too many


def power(decision: Decision, fit: Fit, fx_: fx.Effects, curves: Curves, threshold: float) -> Power:
    base = decision.base
    g = GATING
    sign = SIGNS[:g]
    count = base.count[:, :g]
    tested = max(int((decision.tests > 0).sum()), 1)
    alpha = base.q / tested / np.maximum(decision.tests, 1)  # (C,)
    alpha_pt = -np.expm1(np.log1p(-alpha[:, None]) / np.maximum(count, 1))  # (C, G)
    df = fit.df[:, :, :g]
    crit = t_ppf(1 - np.broadcast_to(alpha_pt[:, None, :], df.shape), df)
    lift = t_ppf(np.full(df.shape, POWER), df)
    k = np.where(fit.k > 0, fit.k, np.nan)
    unit = base.unit(k)[:, :, :g]
    spread = fit.sigma[:, :, :g] * unit
    valid = base.valid[:, :, :g]
    band = np.where(valid, np.maximum(threshold, worse_pct(crit * spread, sign)), np.nan)
    detectable = np.where(
        valid, np.maximum(threshold, worse_pct((crit + lift) * spread, sign)), np.nan
    )
    run_df = fx_.run_df[:, :g]
    m_crit = t_ppf(1 - np.broadcast_to(alpha[:, None], run_df.shape), run_df)
    m_lift = t_ppf(np.full(run_df.shape, POWER), run_df)
    with np.errstate(invalid="ignore", divide="ignore"):
        per_unit = np.nanmean(np.where(base.valid, 1 / fit.sigma, np.nan), axis=1)[:, :g]
    mean_var = (fx_.run_var * base.inv_mean(k) * base.inflate[None, :])[:, :g]
    m_spread = np.sqrt(mean_var) / per_unit
    have = count > 0
    mean_band = np.where(have, np.maximum(threshold, worse_pct(m_crit * m_spread, sign)), np.nan)
    mean_detectable = np.where(
        have, np.maximum(threshold, worse_pct((m_crit + m_lift) * m_spread, sign)), np.nan
    )
    runs = _min(np.where(valid, base.runs[:, :, :g], np.nan).reshape(len(alpha), -1), axis=1)
    runs = np.where(np.isfinite(runs), runs, 1.0)
    need = _repeats(decision, fit, fx_, curves, alpha, crit + lift, m_crit + m_lift, runs)
    return Power(
        band=band,
        detectable=detectable,
        mean_band=mean_band,
        mean_detectable=mean_detectable,
        mean_noise=np.where(have, np.expm1(m_spread) * 100, np.nan),
        runs=runs.astype(int),
        repeats=need,
    )


def _repeats(
    decision: Decision,
    fit: Fit,
    fx_: fx.Effects,
    curves: Curves,
    alpha: np.ndarray,
    reach: np.ndarray,
    m_reach: np.ndarray,
    runs: np.ndarray,
) -> np.ndarray:
    """Runs in all (R) at which the unconfirmed regression's closest test would reach its
    estimate with POWER: est >= reach x sd(R), solved for 1/R."""
    base = decision.base
    side = decision.regressed
    g = GATING
    out = np.zeros(len(runs), dtype=int)
    k = np.where(fit.k > 0, fit.k, np.nan)
    for c in np.nonzero(side.suggested)[0]:
        found = side.tests
        members = [
            float(sidak(np.array(np.nanmin(found.points[c, :, m])), np.array(base.count[c, m])))
            if base.count[c, m]
            else np.nan
            for m in range(g)
        ]
        members += [float(v) for v in found.means[c]] + [float(side.curve_p[c])]
        best = int(np.nanargmin(np.array(members)))
        d = (base.x[c] / fit.sigma[c]) - base.shift[None, :]
        if best < g:  # a point's check
            m = best
            j = int(np.nanargmin(found.points[c, :, m]))
            est = abs(float(d[j, m]))
            room = (est / float(reach[c, j, m])) ** 2 - 1 / float(k[c, j, m])
        elif best < 2 * g:  # the config mean
            m = best - g
            with np.errstate(invalid="ignore"):
                est = abs(float(np.nanmean(np.where(base.valid[c, :, m], d[:, m], np.nan))))
                h = float(np.nanmean(np.where(base.valid[c, :, m], 1 / k[c, :, m], np.nan)))
            scale = float(fx_.run_var[c, m] * base.inflate[m])
            room = est**2 / (float(m_reach[c, m]) ** 2 * scale) - h
        else:  # the curve
            df = np.array(curves.df[c])
            c_reach = float(t_ppf(1 - np.array(alpha[c]), df) + t_ppf(np.array(POWER), df))
            est = abs(float(curves.t[c])) * float(np.sqrt(1 / runs[c] + 1 / curves.k[c]))
            room = (est / c_reach) ** 2 - 1 / float(curves.k[c])
        share = float(base.share[m]) if best < g else 1.0
        need = int(np.ceil(share / room)) if room > 0 else MAX_REPEATS + 1
        out[c] = max(need, int(runs[c]) + 1) if need <= MAX_REPEATS else -1
    return out
