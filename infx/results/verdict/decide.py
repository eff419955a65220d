"""The tests, and where errors are controlled: on the sweep, where the maintainer acts.

Per config and judged metric, two one-sided tests of this PR's runs against main's level
(`infx.results.noise.fit`), relative to this PR's sweep-wide effect when the sweep holds enough
configs (`infx.results.noise.effects`):

- **max over points**: each point's t = (d - u) / sqrt(1/R + 1/k) (d its deviation in its
  own scatter, u the sweep's shift, R this PR's runs, k main's) with the point's degrees
  of freedom; the smallest p-value over the config's points becomes the config's by
  Sidak's rule, 1 - (1 - p)^J;
- **config mean**: the mean of its points' deviations against its run variance (the
  points of one run move together), t with the run variance's degrees of freedom.

A test whose change (this PR against main, in percent) is inside `threshold` has p = 1: a
change that small is never flagged, whatever the noise. A config's p-value is the
Bonferroni bound over its tests (and its matched-interactivity curve's, when meaningful).
Across configs, Benjamini and Hochberg's step-up at Q (valid under the positive dependence
that shared run effects cause); when the sweep-wide shift is tested too, Q is split evenly
between it and the configs. Inside a flagged config, its points' checks and its own tests
are judged by Holm at the level the config was flagged at. Improvements: the same, in the
other direction.

A config flagged at SUGGEST but not at Q is **unconfirmed** (`infx.results.verdict.power` names
the runs that would settle it); so is a flagged one within noise of main's provisional
level (`Fit.moved`): main moved too.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from infx.results.noise import effects as fx
from infx.results.noise.fit import Fit
from infx.results.noise.series import GATING, SIGNS
from infx.results.noise.tdist import t_cdf, t_ppf

Q = 0.05  # unchanged PR sweeps failing the gate: at most this fraction, whatever their size
MIN_SHARE = 0.5  # least share of a point's variance left once the sweep's effect is out
SUGGEST = 0.25  # flagged at this false discovery rate but not at Q: unconfirmed
EDGE = 1e-9  # percent: a change on the threshold (give or take float error) is noise


def bh(p: np.ndarray, q: float) -> tuple[np.ndarray, float]:
    """Benjamini-Hochberg: which p-values (NaN: not tested) are discoveries at FDR q, and
    the level they passed (q / m when none did: what one discovery alone would need)."""
    tested = ~np.isnan(p)
    m = int(tested.sum())
    if not m:
        return np.zeros(p.shape, dtype=bool), q
    order = np.sort(p[tested])
    passed = np.nonzero(order <= q * np.arange(1, m + 1) / m)[0]
    if not len(passed):
        return np.zeros(p.shape, dtype=bool), q / m
    cutoff = q * (int(passed[-1]) + 1) / m
    return tested & (np.nan_to_num(p, nan=2.0) <= cutoff), cutoff


def holm(p: np.ndarray, alpha: np.ndarray) -> np.ndarray:
    """Holm's step-down per row of `p` (NaN: not a test) at each row's `alpha`."""
    m = (~np.isnan(p)).sum(axis=1)
    filled = np.where(np.isnan(p), np.inf, p)
    order = np.argsort(filled, axis=1)
    ranked = np.take_along_axis(filled, order, axis=1)
    steps = np.arange(p.shape[1])[None, :]
    limit = alpha[:, None] / np.maximum(m[:, None] - steps, 1)
    ok = np.cumprod(ranked <= limit, axis=1).astype(bool)
    out = np.zeros(p.shape, dtype=bool)
    np.put_along_axis(out, order, ok, axis=1)
    found: np.ndarray = out & ~np.isnan(p)
    return found


def sidak(p: np.ndarray, n: np.ndarray) -> np.ndarray:
    """The chance that the smallest of n independent p-values is at most p."""
    out: np.ndarray = -np.expm1(n * np.log1p(-np.minimum(p, 1 - 1e-16)))
    return out


def _min(a: np.ndarray, axis: int) -> np.ndarray:
    out: np.ndarray = np.min(np.where(np.isnan(a), np.inf, a), axis=axis)
    return out


@dataclass(frozen=True)
class Base:
    """This PR against main: what every test starts from. (C, J, M) unless said."""

    x: np.ndarray  # log change against main's level
    runs: np.ndarray  # this PR's runs behind each mean (NaN: none)
    valid: np.ndarray  # judged: a level, a scatter and a PR value (interactivity never)
    count: np.ndarray  # (C, M) points judged
    shift: np.ndarray  # (M,) this PR's sweep-wide effect, standardized (0: not estimated)
    sweeping: np.ndarray  # (M,) the sweep-wide effect estimated and tested
    held: np.ndarray  # (M,) configs behind it
    inflate: np.ndarray  # (M,) the config-mean variance's factor for the shift's error
    q: float  # the false discovery rate the configs are judged at
    share: np.ndarray  # (M,) of a point's run-to-run variance left once the sweep's is out

    @classmethod
    def of(cls, fit: Fit, fx_: fx.Effects, pr: np.ndarray, repeats: np.ndarray) -> Base:
        x = pr - fit.center
        runs = np.where(repeats > 0, repeats, np.nan)
        valid = np.isfinite(x) & np.isfinite(runs) & (fit.k > 0) & np.isfinite(fit.sigma)
        valid[:, :, GATING:] = False
        with np.errstate(invalid="ignore"):
            dev = np.nanmean(np.where(valid, x / fit.sigma, np.nan), axis=1)
        shift, held = fx.sweep_shift(dev)
        sweeping = np.isfinite(fx_.sweep_var) & (held >= fx.MIN_SWEEP)
        sweeping[GATING:] = False
        inflate = 1 + np.where(sweeping, math.pi / 2 / np.maximum(held, 1), 0.0)
        q = Q / 2 if sweeping.any() else Q
        # the sweep-wide effect taken out of this PR's runs leaves the rest of a point's
        # variance (never credited with less than MIN_SHARE: main's estimate is noisy)
        left = np.clip(1 - np.nan_to_num(fx_.sweep_var, nan=0.0), MIN_SHARE, 1.0)
        share = np.where(sweeping, left, 1.0)
        return cls(
            x, runs, valid, valid.sum(axis=1), np.where(sweeping, shift, 0.0), sweeping, held,
            inflate, q, share,
        )  # fmt: skip

    def unit(self, k: np.ndarray) -> np.ndarray:
        """(C, J, M): a point's standard error in its scatter: this PR's mean (the sweep's
        effect out) against main's level of k runs."""
        out: np.ndarray = np.sqrt(self.share[None, None, :] / self.runs + 1 / k)
        return out

    def inv_mean(self, k: np.ndarray) -> np.ndarray:
        """(C, M): mean over a config's points of 1/R, plus of 1/k."""
        with np.errstate(invalid="ignore"):
            a = np.nanmean(np.where(self.valid, 1 / self.runs, np.nan), axis=1)
            b = np.nanmean(np.where(self.valid, 1 / k, np.nan), axis=1)
        out: np.ndarray = a + b
        return out


@dataclass(frozen=True)
class Tests:
    """p-values of one direction: per point check (C, J, G) and per config mean (C, G)."""

    points: np.ndarray
    means: np.ndarray


def tests(
    base: Base, fit: Fit, fx_: fx.Effects, threshold: float, moved: bool
) -> tuple[Tests, Tests]:
    """(regressed, improved) p-values against main's established level, or (`moved`)
    against its provisional one where a series has one."""
    k = np.where(fit.k > 0, fit.k, np.nan)
    x = base.x
    if moved:
        has = fit.k_moved > 0
        x = x - np.where(has, fit.moved, 0.0)
        k = np.where(has, fit.k_moved, k)
    sign = SIGNS[None, None, :]
    d = np.where(base.valid, x / fit.sigma, np.nan)
    t = sign * (d - base.shift[None, None, :]) / base.unit(k)
    pct = sign * np.expm1(x) * 100
    nan = np.where(base.valid, 0.0, np.nan)
    worse = np.where(pct < -(threshold + EDGE), t_cdf(t, fit.df), 1.0) + nan
    better = np.where(pct > threshold + EDGE, t_cdf(-t, fit.df), 1.0) + nan
    with np.errstate(invalid="ignore"):
        dv = np.nanmean(d, axis=1)
        xb = np.nanmean(np.where(base.valid, x, np.nan), axis=1)
    var = fx_.run_var * base.inv_mean(k) * base.inflate[None, :]
    tm = SIGNS[None, :] * (dv - base.shift[None, :]) / np.sqrt(var)
    mpct = SIGNS[None, :] * np.expm1(xb) * 100
    have = np.where(base.count > 0, 0.0, np.nan)
    m_worse = np.where(mpct < -(threshold + EDGE), t_cdf(tm, fx_.run_df), 1.0) + have
    m_better = np.where(mpct > threshold + EDGE, t_cdf(-tm, fx_.run_df), 1.0) + have
    g = GATING
    return (
        Tests(worse[:, :, :g], m_worse[:, :g]),
        Tests(better[:, :, :g], m_better[:, :g]),
    )


@dataclass(frozen=True)
class Side:
    """One direction's verdicts (regressions, or improvements)."""

    tests: Tests
    curve_p: np.ndarray  # (C,) NaN: no curve test
    config_p: np.ndarray  # (C,) Bonferroni over the config's tests; NaN: none
    flagged: np.ndarray  # (C,) at Q
    suggested: np.ndarray  # (C,) at SUGGEST, not at Q
    cutoff: float  # the level flagged configs passed
    points: np.ndarray  # (C, J, G) checks flagged (Holm inside flagged configs)
    means: np.ndarray  # (C, G) mean tests flagged
    curve: np.ndarray  # (C,) curve test flagged
    moved: np.ndarray  # (C,) flagged, yet within noise of main's provisional level
    points_moved: np.ndarray  # (C, J, G) likewise per check


def family(found: Tests, curve_p: np.ndarray, count: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """(C, tests) p-values of each config's family, and the Bonferroni bound over it."""
    n = count[:, :GATING]
    maxed = np.where(n > 0, sidak(_min(found.points, axis=1), n), np.nan)
    members = np.concatenate([maxed, found.means, curve_p[:, None]], axis=1)
    size = (~np.isnan(members)).sum(axis=1)
    bound = np.where(size > 0, np.minimum(1.0, size * _min(members, axis=1)), np.nan)
    return members, bound


def side(
    base: Base,
    found: Tests,
    provisional: Tests,
    curve_p: np.ndarray,
    curve_moved: np.ndarray,
    has_moved: np.ndarray,
) -> Side:
    """Benjamini-Hochberg across configs, Holm inside the flagged ones, and the check
    against main's provisional level."""
    _, config_p = family(found, curve_p, base.count)
    flagged, cutoff = bh(config_p, base.q)
    loose, _ = bh(config_p, SUGGEST * base.q / Q)
    alpha = np.where(flagged, cutoff, 0.0)
    c = len(config_p)
    flat = found.points.reshape(c, -1)
    points = holm(flat, alpha).reshape(found.points.shape)
    own = holm(np.concatenate([found.means, curve_p[:, None]], axis=1), alpha)
    _, moved_p = family(provisional, curve_moved, base.count)
    moved = flagged & has_moved.any(axis=(1, 2)) & ~(np.nan_to_num(moved_p, nan=1.0) <= cutoff)
    m = (~np.isnan(flat)).sum(axis=1)
    reach = (alpha / np.maximum(m, 1))[:, None, None]
    points_moved = points & has_moved & ~(np.nan_to_num(provisional.points, nan=1.0) <= reach)
    return Side(
        tests=found,
        curve_p=curve_p,
        config_p=config_p,
        flagged=flagged,
        suggested=loose & ~flagged,
        cutoff=cutoff,
        points=points,
        means=own[:, :GATING],
        curve=own[:, GATING],
        moved=moved,
        points_moved=points_moved,
    )


@dataclass(frozen=True)
class Curves:
    """Each config's matched-interactivity curve test (t NaN: not meaningful, no test)."""

    t: np.ndarray  # (C,) this PR's change over its scatter; up is better
    df: np.ndarray  # (C,)
    change: np.ndarray  # (C,) percent
    k: np.ndarray  # (C,) main's runs behind the curve's level
    t_moved: np.ndarray  # (C,) t against main's recent level (provisional or drifting)
    change_moved: np.ndarray  # (C,) percent against it

    def p(self, threshold: float, moved: bool = False) -> tuple[np.ndarray, np.ndarray]:
        t, change = (self.t_moved, self.change_moved) if moved else (self.t, self.change)
        ok = np.isfinite(t)
        worse = np.where(ok & (change < -(threshold + EDGE)), t_cdf(t, self.df), 1.0)
        better = np.where(ok & (change > threshold + EDGE), t_cdf(-t, self.df), 1.0)
        return np.where(ok, worse, np.nan), np.where(ok, better, np.nan)


@dataclass(frozen=True)
class Decision:
    base: Base
    regressed: Side
    improved: Side
    tests: np.ndarray  # (C,) tests behind each config's p-value


def decide(
    fit: Fit, fx_: fx.Effects, pr: np.ndarray, repeats: np.ndarray, threshold: float,
    curves: Curves,
) -> Decision:  # fmt: skip
    base = Base.of(fit, fx_, pr, repeats)
    worse, better = tests(base, fit, fx_, threshold, moved=False)
    worse_v, better_v = tests(base, fit, fx_, threshold, moved=True)
    c_worse, c_better = curves.p(threshold)
    cv_worse, cv_better = curves.p(threshold, moved=True)
    has_moved = (fit.k_moved > 0)[:, :, :GATING] & base.valid[:, :, :GATING]
    regressed = side(base, worse, worse_v, c_worse, cv_worse, has_moved)
    improved = side(base, better, better_v, c_better, cv_better, has_moved)
    members, _ = family(worse, c_worse, base.count)
    return Decision(base, regressed, improved, (~np.isnan(members)).sum(axis=1))


@dataclass(frozen=True)
class Sweep:
    """The sweep-wide shift of this PR: every config moved (an image bump moves them all)."""

    change: np.ndarray  # (M,) percent: the median over configs of their mean change
    active: np.ndarray  # (M,) estimated and tested (at least MIN_SWEEP configs, a history)
    p: tuple[float, float]  # (worse, better) over the active metrics (Bonferroni); NaN: none
    flagged: tuple[bool, bool]
    band: np.ndarray  # (M,) percent the sweep must move to be flagged


def _sweep_p(
    shift: np.ndarray, raw: np.ndarray, var: np.ndarray, active: np.ndarray, df: np.ndarray,
    threshold: float,
) -> tuple[np.ndarray, np.ndarray]:  # fmt: skip
    """(worse, better) p-values of a sweep-wide shift per metric (1: inside the threshold)."""
    t = SIGNS * shift / np.sqrt(var)
    pct = SIGNS * np.expm1(raw) * 100
    worse = np.where(active & (pct < -(threshold + EDGE)), t_cdf(t, df), 1.0)
    better = np.where(active & (pct > threshold + EDGE), t_cdf(-t, df), 1.0)
    return worse, better


def sweep(base: Base, fit: Fit, fx_: fx.Effects, threshold: float) -> Sweep:
    """The sweep-wide shift against how far main's runs move together (at Q / 2)."""

    k = np.where(fit.k > 0, fit.k, np.nan)
    active = base.sweeping
    n = int(active.sum())
    nothing = np.full(len(SIGNS), np.nan)
    if not n:
        return Sweep(np.zeros(len(SIGNS)), active, (math.nan, math.nan), (False, False), nothing)
    with np.errstate(invalid="ignore"):
        inv = np.nanmedian(base.inv_mean(k), axis=0)
        xbar = np.nanmean(np.where(base.valid, base.x, np.nan), axis=1)
        raw = np.nanmedian(np.where(base.count > 0, xbar, np.nan), axis=0)
        unit = np.nanmedian(np.nanmean(np.where(base.valid, 1 / fit.sigma, np.nan), axis=1), 0)
    var = fx_.sweep_var * inv + fx.median_var(fx_.run_var, base.held)
    worse, better = _sweep_p(base.shift, raw, var, active, fx_.sweep_df, threshold)
    # main's own recent level (provisional newest runs, or the trend's where it drifts):
    # a sweep one step further along main's drift is main's doing, not this PR's
    has = (fit.k_moved > 0) & base.valid
    if has.any():
        recent = base.x - np.where(has, fit.moved, 0.0)
        with np.errstate(invalid="ignore"):
            dev = np.nanmean(np.where(base.valid, recent / fit.sigma, np.nan), axis=1)
            xbar_r = np.nanmean(np.where(base.valid, recent, np.nan), axis=1)
            raw_r = np.nanmedian(np.where(base.count > 0, xbar_r, np.nan), axis=0)
        shift_r, _ = fx.sweep_shift(dev)
        worse_r, better_r = _sweep_p(shift_r, raw_r, var, active, fx_.sweep_df, threshold)
        worse, better = np.maximum(worse, worse_r), np.maximum(better, better_r)
    p = (min(1.0, n * float(worse[active].min())), min(1.0, n * float(better[active].min())))
    crit = t_ppf(np.full(len(SIGNS), 1 - base.q / n), np.where(active, fx_.sweep_df, 1.0))
    spread = crit * np.sqrt(np.where(active, var, 0.0)) / np.where(active, unit, 1.0)
    band = np.where(active, np.maximum(threshold, np.expm1(spread) * 100), np.nan)
    change = np.where(active, np.expm1(raw) * 100, 0.0)
    return Sweep(change, active, p, (p[0] <= base.q, p[1] <= base.q), band)
