"""The tests, and where errors are controlled: on the sweep, where the maintainer acts.

Per config, against main's level (`infx.results.noise.model`), this PR's runs pooled
(`infx.results.noise.pool`), for each gated metric (throughput per GPU, TPOT p50):

- **config**: the pooled run deviation y against the run scatter s_b: t = y / (s_b
  sqrt(1/R + 1/n)), R this PR's runs, n main's runs behind the level, Student's t with
  s_b's degrees of freedom;
- **points**: each point's pooled residual after its run's deviation against its own
  residual scatter s_j: t = r / (s_j sqrt(1/R + 1/n)); a change at one concurrency.

Inside a config, a weighted Bonferroni bound: SHARE of the level to the config tests
(split evenly over the gated metrics), the rest to the point tests (split evenly over points x gated metrics): the
config's p-value is min(1, min over tests of p / weight). Across configs,
Benjamini-Hochberg at q, the false-fail rate the settings name (valid under the positive
dependence that shared run effects cause; for an unchanged sweep it is the chance that it
fails at all). A test whose change is inside `threshold` has p = 1.

A config flagged at SUGGEST x q but not at q is **unconfirmed** (`power` names the runs
that would settle it); so is a flagged one within noise of main's provisional level
(`Model.moved`: main's provisional newest runs, or the trend of a drift at its newest run):
main moved too, and a change is only confirmed beyond both. Improvements: the same, in the other direction. Metrics
that do not gate are advisory: each gets its own band (Student's t with at most TAIL_DF
degrees of freedom: tails and TTFT are heavy-tailed), said, never counted. So is
throughput at matched interactivity (`curves`): it is made of throughput and TPOT, both
gated, and its own history is a second model of the same noise.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from infx.results.noise.median import nanmedian
from infx.results.noise.model import MIN_LEVEL, Model
from infx.results.noise.pool import Pooled
from infx.results.noise.series import GATED, SIGNS
from infx.results.noise.sweep import Sweep, sweep
from infx.results.noise.tdist import t_cdf, t_ppf

Q = 0.05  # default false-fail rate ([results] false-fail): unchanged sweeps failing
SHARE = 0.8  # of a config's level to its config-wide tests; the rest to its points
SUGGEST = 5.0  # flagged at SUGGEST x q (0.25 at 0.05) but not at q: unconfirmed
TAIL_DF = 3  # the heaviest-tailed t with a finite variance: advisory lines' distribution
# An advisory line of an unchanged run lands beyond its band this often (two-sided); it
# is said, never counted, so it needs no share of the sweep's rate.
ADVISORY_ALPHA = 0.01
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


def _min(a: np.ndarray, axis: int | tuple[int, ...]) -> np.ndarray:
    out: np.ndarray = np.min(np.where(np.isnan(a), np.inf, a), axis=axis)
    return out


@dataclass(frozen=True)
class Base:
    """This PR against main: what every test starts from. (C, J, M) unless said."""

    x: np.ndarray  # log change of each point (pooled) against main's level
    mean: np.ndarray  # (C, M) log change of the config's pooled run deviation
    resid: np.ndarray  # the pooled residual after the run deviation
    runs: np.ndarray  # this PR's runs behind each point (NaN: none)
    k: np.ndarray  # (C, M) this PR's runs behind the config's deviation (NaN: none)
    valid: np.ndarray  # gated and judged: a level, a scatter and a PR value
    shown: np.ndarray  # advisory and judged
    count: np.ndarray  # (C, M) valid points
    tested: np.ndarray  # point tests (valid, and the config has 2 points or more)
    config_tests: np.ndarray  # (C,) gated metrics judged
    point_tests: np.ndarray  # (C,)
    q: float  # the rate the configs are judged at (half the named one with a sweep test)
    run_sd: np.ndarray  # (C, M) the run scatter a config's deviation is judged with
    run_df: np.ndarray  # (C, M)
    sweep: Sweep

    @classmethod
    def of(cls, model: Model, pooled: Pooled, q: float, run_of: np.ndarray) -> Base:
        x = pooled.value - model.center
        runs = np.where(pooled.runs > 0, pooled.runs, np.nan).astype(float)
        judged = np.isfinite(x) & np.isfinite(runs) & np.isfinite(model.point_sd)
        valid = judged & GATED[None, None, :]
        shown = judged & ~GATED[None, None, :]
        shown[:, :, len(GATED) - 1] = False  # interactivity: TPOT again, never judged
        count = valid.sum(axis=1)
        mean = pooled.dev - np.nan_to_num(model.offset)
        k = np.where(pooled.dev_runs > 0, pooled.dev_runs, np.nan).astype(float)
        tested = valid & (count[:, None, :] >= 2)
        config_tests = (count > 0).sum(axis=1)
        wide = sweep(model, run_of, np.where(count > 0, mean, np.nan), GATED)
        mean = mean - np.where(wide.active[None, :], model.run_sd * wide.effect[None, :], 0.0)
        q_configs = q / 2 if wide.active.any() else q
        return cls(
            x, mean, pooled.resid, runs, k, valid, shown, count, tested, config_tests,
            tested.sum(axis=(1, 2)), q_configs, wide.run_sd, wide.run_df, wide,
        )  # fmt: skip

    def weights(self) -> tuple[np.ndarray, np.ndarray]:
        """(C,) each config test's and each point test's multiplier of its p-value (its
        share of the config's level, inverted): Bonferroni weighted by SHARE."""
        share = np.where(self.point_tests > 0, SHARE, 1.0)
        cfg = self.config_tests / share
        pt = np.where(self.point_tests > 0, self.point_tests / (1 - SHARE), np.inf)
        return np.where(self.config_tests > 0, cfg, np.inf), pt


@dataclass(frozen=True)
class Tests:
    """p-values of one direction: per point (C, J, M) and per config mean (C, M); NaN: no
    such test."""

    points: np.ndarray
    means: np.ndarray


def _p(t: np.ndarray, df: np.ndarray, pct: np.ndarray, threshold: float) -> tuple[np.ndarray, ...]:
    """(worse, better) one-sided p-values; 1 where the change is inside the threshold."""
    worse = np.where(pct < -(threshold + EDGE), t_cdf(t, df), 1.0)
    better = np.where(pct > threshold + EDGE, t_cdf(-t, df), 1.0)
    return worse, better


def tests(base: Base, model: Model, threshold: float, moved: bool) -> tuple[Tests, Tests]:
    """(regressed, improved) against main's level, or (`moved`) against its provisional
    level where it has one."""
    sign = SIGNS[None, None, :]
    resid, x, mean = base.resid, base.x, base.mean
    n = np.maximum(model.n, 1).astype(float)[:, None, None]
    lag = 1 / n[:, :, 0]
    if model.point_n is not None:  # a point's mean rests on the runs that measured it
        n = np.maximum(model.point_n, 1).astype(float)
    if moved:
        has = model.recent[:, None, None]
        with np.errstate(invalid="ignore"):
            shift = np.nanmean(np.where(base.valid, model.moved, np.nan), axis=1)  # (C, M)
        shift = np.nan_to_num(shift)
        x = np.where(has, x - np.nan_to_num(model.moved), x)
        resid = np.where(has, resid - np.nan_to_num(model.moved - shift[:, None, :]), resid)
        mean = np.where(has[:, :, 0], mean - shift, mean)
        runs = model.k_moved.astype(float)[:, None, None]
        n = np.where(has & (runs > 0), runs, n)
        lag = np.where(has[:, :, 0], model.recent_lag[:, None], lag)
    t = sign * resid / (model.point_sd * np.sqrt(1 / base.runs + 1 / n))
    pct = sign * np.expm1(x) * 100
    worse, better = _p(t, model.point_df, pct, threshold)
    none = np.where(base.tested, 0.0, np.nan)
    tm = SIGNS[None, :] * mean / (base.run_sd * np.sqrt(1 / base.k + lag))
    mpct = SIGNS[None, :] * np.expm1(mean) * 100
    m_worse, m_better = _p(tm, base.run_df, mpct, threshold)
    have = np.where((base.count > 0) & np.isfinite(base.k), 0.0, np.nan)
    return (
        Tests(worse + none, m_worse + have),
        Tests(better + none, m_better + have),
    )


@dataclass(frozen=True)
class Side:
    """One direction's verdicts (regressions, or improvements)."""

    tests: Tests
    curve_p: np.ndarray  # (C,) the curve's own p-value, shown (NaN: no curve test)
    config_p: np.ndarray  # (C,) the config's weighted Bonferroni bound; NaN: untested
    flagged: np.ndarray  # (C,) at q
    suggested: np.ndarray  # (C,) at SUGGEST x q, not at q
    cutoff: float  # the level flagged configs passed
    points: np.ndarray  # (C, J, M) point tests flagged
    means: np.ndarray  # (C, M) config tests flagged
    moved: np.ndarray  # (C,) flagged, yet within noise (both ways) of main's recent level
    points_moved: np.ndarray  # (C, J, M) likewise per point test, or main measured it lately
    # (C,) flagged by points main measured in fewer than MIN_LEVEL runs alone: unconfirmed
    young: np.ndarray


def family(base: Base, found: Tests) -> np.ndarray:
    """(C,) each config's weighted Bonferroni bound over its tests (NaN: none)."""
    cfg, pt = base.weights()
    best_cfg = _min(found.means, axis=1) * cfg
    best_pt = _min(found.points, axis=(1, 2)) * pt
    bound = np.minimum(1.0, np.minimum(best_cfg, best_pt))
    return np.where(np.isfinite(bound), bound, np.nan)


def side(
    base: Base, found: Tests, recent: tuple[Tests, Tests], curve_p: np.ndarray,
    has_moved: np.ndarray, young: np.ndarray,
) -> Side:  # fmt: skip
    """Benjamini-Hochberg across configs; inside a flagged config, each test at the level
    it passed; and whether it is within noise (both ways) of main's recent level. A point
    main measured in fewer than MIN_LEVEL runs while the config has more (`young`: a
    concurrency added lately) has no established level: flagged, it is unconfirmed, and so
    is a config flagged by such points alone."""
    config_p = family(base, found)
    flagged, cutoff = bh(config_p, base.q)
    loose, _ = bh(config_p, min(1.0, SUGGEST * base.q))
    cfg, pt = base.weights()
    reach_cfg = np.where(flagged, cutoff / cfg, 0.0)
    reach_pt = np.where(flagged, cutoff / pt, 0.0)
    points = np.nan_to_num(found.points, nan=2.0) <= reach_pt[:, None, None]
    means = np.nan_to_num(found.means, nan=2.0) <= reach_cfg[:, None]
    differs = np.zeros(len(config_p), dtype=bool)
    again = np.zeros(points.shape, dtype=bool)
    for tests_ in recent:
        differs |= np.nan_to_num(family(base, tests_), nan=1.0) <= cutoff
        again |= np.nan_to_num(tests_.points, nan=1.0) <= reach_pt[:, None, None]
    settled = Tests(np.where(young, np.nan, found.points), found.means)
    established = np.nan_to_num(family(base, settled), nan=1.0) <= cutoff
    moved = flagged & has_moved & ~differs
    points_moved = points & ((has_moved[:, None, None] & ~again) | young)
    return Side(
        tests=found,
        curve_p=curve_p,
        config_p=config_p,
        flagged=flagged,
        suggested=loose & ~flagged,
        cutoff=cutoff,
        points=points,
        means=means,
        moved=moved,
        points_moved=points_moved,
        young=flagged & ~moved & ~established,
    )


@dataclass(frozen=True)
class Curves:
    """Each config's matched-interactivity curve test (t NaN: not meaningful, no test)."""

    t: np.ndarray  # (C,) this PR's change over its scatter; up is better
    df: np.ndarray  # (C,)
    change: np.ndarray  # (C,) percent
    k: np.ndarray  # (C,) main's runs behind the curve's level
    t_moved: np.ndarray  # (C,) t against main's provisional level
    change_moved: np.ndarray  # (C,) percent against it

    def p(self, threshold: float, moved: bool = False) -> tuple[np.ndarray, np.ndarray]:
        t, change = (self.t_moved, self.change_moved) if moved else (self.t, self.change)
        ok = np.isfinite(t)
        worse = np.where(ok & (change < -(threshold + EDGE)), t_cdf(t, self.df), 1.0)
        better = np.where(ok & (change > threshold + EDGE), t_cdf(-t, self.df), 1.0)
        return np.where(ok, worse, np.nan), np.where(ok, better, np.nan)


@dataclass(frozen=True)
class Shift:
    """This PR's sweep-wide effect (every config moved alike), judged apart."""

    change: np.ndarray  # (M,) percent: the median over configs of their mean change
    active: np.ndarray  # (M,) estimated and tested
    p: tuple[float, float]  # (worse, better), Bonferroni over the active metrics; NaN: none
    flagged: tuple[bool, bool]
    band: np.ndarray  # (M,) percent the sweep must move to be flagged


def shift(base: Base, model: Model, threshold: float, q: float) -> Shift:
    """The sweep's effect against how far main's runs' effects scatter, at q / 2."""
    wide = base.sweep
    active = wide.active
    n = int(active.sum())
    nothing = np.full(len(SIGNS), np.nan)
    if not n:
        return Shift(np.zeros(len(SIGNS)), active, (np.nan, np.nan), (False, False), nothing)
    with np.errstate(invalid="ignore"):
        k = float(nanmedian(base.k[np.isfinite(base.k)])) if np.isfinite(base.k).any() else 1
        raw = nanmedian(
            np.where(base.count > 0, base.mean + model.run_sd * wide.effect, np.nan), axis=0
        )
    se = wide.scatter * np.sqrt(1 / k + 1 / np.maximum(wide.runs, 1))
    df = np.maximum(wide.runs - 1, 1)
    t = SIGNS * wide.effect / se
    pct = SIGNS * np.expm1(raw) * 100
    worse, better = _p(t, df, pct, threshold)
    worse, better = np.where(active, worse, np.nan), np.where(active, better, np.nan)
    p = (min(1.0, n * float(np.nanmin(worse))), min(1.0, n * float(np.nanmin(better))))
    half = q / 2
    crit = t_ppf(np.where(active, 1 - half / n, 0.5), df)
    unit = nanmedian(np.where(base.count > 0, model.run_sd, np.nan), axis=0)
    band = np.where(active, np.maximum(threshold, np.expm1(crit * se * unit) * 100), np.nan)
    change = np.where(active, np.expm1(raw) * 100, 0.0)
    return Shift(change, active, p, (p[0] <= half, p[1] <= half), band)


@dataclass(frozen=True)
class Decision:
    base: Base
    regressed: Side
    improved: Side
    shift: Shift
    tests: np.ndarray  # (C,) tests behind each config's p-value
    worse: np.ndarray  # (C, J, M) a point's check flagged worse (its own test or its config's)
    better: np.ndarray  # (C, J, M)
    # (C, J, M) points main's history measured in fewer than MIN_LEVEL runs while the config
    # has more: no level of their own (never in pairs, whose level is main's runs beside)
    young: np.ndarray


def decide(
    model: Model, pooled: Pooled, threshold: float, curves: Curves, run_of: np.ndarray,
    q: float = Q, paired: bool = False,
) -> Decision:  # fmt: skip
    """`paired`: the level is main's image measured beside this PR's runs, not main's
    history, so a point its history measured lately is not young."""
    base = Base.of(model, pooled, q, run_of)
    worse, better = tests(base, model, threshold, moved=False)
    worse_v, better_v = tests(base, model, threshold, moved=True)
    c_worse, c_better = curves.p(threshold)
    has_moved = model.recent
    recent = (worse_v, better_v)
    young = np.zeros(base.tested.shape, dtype=bool)
    if model.point_n is not None and not paired:
        fewer = np.minimum(model.n, MIN_LEVEL)[:, None, None]  # than the config's own runs
        young = base.tested & (model.point_n < fewer)
    regressed = side(base, worse, recent, c_worse, has_moved, young)
    improved = side(base, better, recent, c_better, has_moved, young)
    sign = SIGNS[None, None, :]
    pct = sign * np.expm1(base.x) * 100
    beyond_worse = base.valid & (pct < -(threshold + EDGE))
    beyond_better = base.valid & (pct > threshold + EDGE)
    return Decision(
        base,
        regressed,
        improved,
        shift(base, model, threshold, q),
        base.config_tests + base.point_tests,
        regressed.points | (regressed.means[:, None, :] & beyond_worse),
        improved.points | (improved.means[:, None, :] & beyond_better),
        young,
    )
