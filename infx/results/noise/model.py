"""Main's history of every config at once, as one noise model: which runs are outliers, where
the config stepped or drifts, its level, and how far a new run may land from it.

The values arrive as one array (configs, runs, concurrencies, metrics) of logs, NaN where a
run did not measure a point, each config's runs aligned at its newest (`series` builds it).
The model works on runs, not on values: the points of one run move together (a node, a
driver, a day), so a run is the unit that is an outlier, that steps, and that drifts.

1. **Run deviations**: per config and metric, each run's weighted mean over its points of
   its deviation from the points' means: y_r. The gated metrics (throughput per GPU, TPOT p50)
   decide everything below; the others follow the same runs.
2. **Outlier runs**: a run outside the prediction interval of the others (Student's t with
   n - 2 degrees of freedom, two-sided OUTLIER_ALPHA, Bonferroni over the runs and the gated
   metrics) is left out: a flaky node hits every metric of the config at once. When more
   than max(1, n // OUTLIER_SHARE) runs look so, none is left out: they are how the config
   scatters, not outliers. Left out means left out of the level and the scatter; never
   shrinking a scale (trimmed or median scales fail on real runs: their unchanged repeats
   read worse than main by about one run deviation).
3. **Shape**: the kept runs' deviations are one level, steps (optimal partitioning, a cut
   costing the chi-square a pure-noise cut passes with STEP_ALPHA over the window's
   positions, segments of MIN_SEGMENT runs or more, and beating the best line outright),
   or a drift (a slope beyond its standard error at DRIFT_ALPHA, two-sided, Bonferroni
   over the gated metrics). A drift is one line, never a staircase of steps; one bad run
   is an outlier, never two steps.
4. **Level**: the newest segment holding MIN_LEVEL kept runs or more (the whole window
   without steps); for a drift, the line at main's newest run. Kept runs after it, and
   main's newest runs left out as outliers, are *provisional*: main moved, not yet its
   level.
5. **Scatter**, on the level's runs, plain (ddof 1): the run deviations' standard deviation
   s_b (n - 1 degrees of freedom) and each point's residual after its run's deviation, s_j
   ((n - 1)(1 - w_j) degrees of freedom). A run's deviation weighs each point by the
   inverse of its residual variance (`weights`): equal weights let one noisy point's
   scatter into every residual of its config. Metrics that do not gate (TTFT, tails) keep
   each series' own standard deviation.
6. A point's own residual scatter needs MIN_DF degrees of freedom, else its config's
   (pooled over its points) stands in, or its own shrunk toward that when it is larger;
   with one run, DEFAULT_NOISE per run and point is assumed, RHO of its variance shared by
   the run's points (normal).
"""

from __future__ import annotations

import itertools
import math
from dataclasses import dataclass

import numpy as np

from infx.results.noise import segments, tdist
from infx.results.noise.segments import quiet

# InferenceX's "normal variance +-2 %": a point's run-to-run scatter when nothing shows it.
DEFAULT_NOISE = 0.02
# Share of that variance that is the run's (the points of one run move together: r = 0.40
# on the first H200 set; the value is only used where main's history is too short).
RHO = 0.4
# A point's own residual scatter needs this many degrees of freedom, else it is its
# config's, pooled over the points; a run's scatter is measured from two runs on (Student's
# t carries the doubt), and DEFAULT_NOISE assumed for one.
MIN_DF = 4
MIN_LEVEL = 3  # kept runs a level needs; a newer, shorter segment is provisional
MIN_SEGMENT = 2  # a step leaves at least this many runs on each side (one run is an outlier)
# A run is an outlier at this two-sided level over the window (Bonferroni): one unchanged
# window in a hundred loses a good run.
OUTLIER_ALPHA = 0.01
OUTLIER_SHARE = 5  # at most one run in five is an outlier (and always one may be)
STEP_ALPHA = 0.01  # chance that a window of pure noise is cut at all
DRIFT_ALPHA = 0.01  # chance that a level of pure noise is taken for a drift
DRIFT_MIN = 6  # kept runs before a drift is looked for
# The cut search's noise: the root mean square of first differences over sqrt(2). A step
# moves one difference only (a 10 % step in 20 runs of 3 % noise inflates it by a seventh),
# outliers are out already, and their MAD is far too noisy over a window of runs (its
# standard error near 45 % at 14 differences: half the windows cut on noise).
ROBUST_DIFFS = 10**9
SCALE_FLOOR = 0.002  # the least run-to-run noise the cut search credits (a tenth of 2 %)
FLOOR = 1e-4  # the least scatter judged with (log units): a history that never moved is
# not infinitely sure
WEIGHT_PASSES = 2  # equal weights, then twice the inverse residual variances
_TINY = 1e-12

CONST, STEPS, LINE = 0, 1, 2  # Model.shape


@dataclass(frozen=True)
class Model:
    """Main's level and scatter of every series; (configs, concurrencies, metrics) unless
    said. Log units."""

    center: np.ndarray  # the level a PR is judged against; NaN: no history
    base: np.ndarray  # the level's points' means, from which run deviations are measured
    offset: np.ndarray  # (C, M) the level's run deviation from `base` (about 0)
    n: np.ndarray  # (C,) runs behind the level
    run_sd: np.ndarray  # (C, M) s_b: how far a run's mean deviation moves
    run_df: np.ndarray  # (C, M)
    point_sd: np.ndarray  # s_j for gated metrics; a series' own scatter for the others
    point_df: np.ndarray
    assumed: np.ndarray  # (C, M) DEFAULT_NOISE assumed
    points: np.ndarray  # (C, M) points behind the run deviations
    moved: np.ndarray  # main's recent level minus the level (NaN: none)
    k_moved: np.ndarray  # (C,) runs of the provisional level (0: none; a drift: 0 too)
    recent: np.ndarray  # (C,) main has a recent level (provisional runs, or a drift's trend)
    recent_lag: np.ndarray  # (C,) its variance in units of a run's
    shape: np.ndarray  # (C,) CONST, STEPS or LINE
    slope: np.ndarray  # (C, M) per run (log), 0 but for a drift
    level: np.ndarray  # (C, N) runs the level rests on
    outlier: np.ndarray  # (C, N) runs left out as outliers
    provisional: np.ndarray  # (C, N)
    cuts: np.ndarray  # (C, N) a segment starts at this run
    window: np.ndarray  # (C, N) runs in the config's window
    kept: np.ndarray  # (C, N) runs of the window that shape and level are read from
    dev: np.ndarray  # (C, N, M) each run's deviation from `base` (all window runs)
    weight: np.ndarray  # each point's weight in its run's deviation (sums to 1 per config)
    # (C, J, M) the level's runs that measured each point: a concurrency added to the sweep
    # lately has fewer than the config's n, and its mean and scatter rest on those alone
    point_n: np.ndarray | None = None


def _gated_complete(x: np.ndarray, gated: np.ndarray) -> np.ndarray:
    """(C, N): the run measured every gated metric somewhere in the config."""
    out: np.ndarray = np.isfinite(x[:, :, :, gated]).any(axis=2).all(axis=2)
    return out


def _means(x: np.ndarray, runs: np.ndarray) -> np.ndarray:
    """(C, J, M) NaN-aware mean over the chosen runs (C, N)."""
    pick = np.where(runs[:, :, None, None], x, np.nan)
    with quiet():
        out: np.ndarray = np.nanmean(pick, axis=1)
    return out


def deviations(x: np.ndarray, base: np.ndarray, weight: np.ndarray) -> np.ndarray:
    """(C, N, M): each run's weighted mean over its points of x - base (NaN: no point);
    `weight` (C, J, M), renormalized over the points each run measured."""
    d = x - base[:, None, :, :]
    w = np.where(np.isfinite(d), weight[:, None, :, :], 0.0)
    total = w.sum(axis=2)
    with np.errstate(invalid="ignore", divide="ignore"):
        out: np.ndarray = np.where(total > 0, (w * np.nan_to_num(d)).sum(axis=2) / total, np.nan)
    return out


def weights(x: np.ndarray, base: np.ndarray, runs: np.ndarray) -> np.ndarray:
    """(C, J, M) each point's weight in its run's deviation: the inverse of its residual
    variance (the run's estimate that is least noisy: one point scattering 20 % must not
    carry its quiet neighbours' residuals), from the chosen runs, in WEIGHT_PASSES passes
    from equal weights; each point's variance shrunk toward its config's mean with MIN_DF
    prior degrees of freedom (a point quiet by chance over a few runs must not take the
    whole config). Equal weights below MIN_LEVEL runs. Normalized over the points."""
    have = np.isfinite(base)
    w = have.astype(float)
    n = runs.sum(axis=1)
    pick = runs[:, :, None, None]
    # a point's own runs: one measured in fewer of them (a concurrency added lately) has
    # fewer degrees of freedom, not the config's, and its scatter is shrunk the more
    df = np.maximum((pick & np.isfinite(x)).sum(axis=1) - 1, 0).astype(float)
    for _ in range(WEIGHT_PASSES):
        y = deviations(x, base, w)
        r = np.where(pick, x - base[:, None, :, :] - y[:, :, None, :], np.nan)
        with quiet():
            var = np.nansum(r * r, axis=1) / np.maximum(df, 1)
            mean = np.nanmean(np.where(have, var, np.nan), axis=1, keepdims=True)
        shrunk = (df * var + MIN_DF * np.nan_to_num(mean)) / (df + MIN_DF)
        w = np.where(have, 1 / np.maximum(shrunk, FLOOR * FLOOR), 0.0)
    w = np.where((n >= MIN_LEVEL)[:, None, None], w, have.astype(float))
    # a point fewer than MIN_LEVEL of the runs measured (a concurrency added lately) has no
    # level of its own yet: it does not move a run's deviation while others do (one fast
    # run's point, as main's only value there, read as the whole config slower)
    young = have & (df + 1 < np.minimum(n, MIN_LEVEL)[:, None, None])
    w = np.where(young & (have & ~young).any(axis=1, keepdims=True), 0.0, w)
    total = w.sum(axis=1, keepdims=True)
    out: np.ndarray = np.where(total > 0, w / np.where(total > 0, total, 1.0), 0.0)
    return out


def loo_t(y: np.ndarray, runs: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Each run's deviation against the others' prediction interval: (t, df) per (C, N, G),
    t NaN for runs not chosen or where fewer than 4 runs are."""
    member = runs[:, :, None] & np.isfinite(y)
    n = member.sum(axis=1, keepdims=True).astype(float)
    v = np.where(member, y, 0.0)
    s, ss = v.sum(axis=1, keepdims=True), (v * v).sum(axis=1, keepdims=True)
    n1 = n - 1
    with np.errstate(invalid="ignore", divide="ignore"):
        m1 = (s - v) / n1
        var1 = (ss - v * v - n1 * m1 * m1) / (n1 - 1)
        t = (v - m1) / np.sqrt(np.maximum(var1, _TINY) * (1 + 1 / n1))
    ok = member & (n >= 4)
    return np.where(ok, t, np.nan), np.broadcast_to(n - 2, t.shape)


def outliers(y: np.ndarray, runs: np.ndarray) -> np.ndarray:
    """(C, N) runs outside the others' prediction interval in any gated metric (y: (C, N, G)),
    unless more than max(1, n // OUTLIER_SHARE) runs of the config would be."""
    t, df = loo_t(y, runs)
    n = runs.sum(axis=1)
    g = y.shape[2]
    alpha = OUTLIER_ALPHA / (2 * np.maximum(n, 1) * g)
    limit = tdist.t_ppf(1 - np.broadcast_to(alpha[:, None, None], t.shape), np.maximum(df, 1))
    far = (np.abs(np.nan_to_num(t)) > limit).any(axis=2) & runs
    too_many = far.sum(axis=1) > np.maximum(1, n // OUTLIER_SHARE)
    out: np.ndarray = far & ~too_many[:, None]
    return out


def _rss_segments(z: np.ndarray, ids: np.ndarray, kept: np.ndarray) -> np.ndarray:
    """(C,) squared deviations of z (C, N, G) from its segments' means."""
    total = np.zeros(z.shape[0])
    for g in range(int(ids.max(initial=0)) + 1):
        member = (kept & (ids == g))[:, :, None]
        n = member.sum(axis=1)
        zs = np.where(member, z, 0.0)
        mean = zs.sum(axis=1) / np.maximum(n, 1)
        dev = np.where(member, z - mean[:, None, :], 0.0)
        total += (dev * dev).sum(axis=(1, 2))
    return total


def _line(y: np.ndarray, runs: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Least-squares line of y (C, N, G) over run positions, on the chosen runs: (slope
    (C, G), mean position (C,), Sxx (C,))."""
    pos = np.arange(y.shape[1], dtype=float)[None, :]
    n = np.maximum(runs.sum(axis=1), 1)
    tbar = (pos * runs).sum(axis=1) / n
    dt = np.where(runs, pos - tbar[:, None], 0.0)
    sxx = (dt * dt).sum(axis=1)
    dy = np.where(runs[:, :, None], np.nan_to_num(y), 0.0)
    dy = dy - np.where(runs[:, :, None], dy.sum(axis=1, keepdims=True) / n[:, None, None], 0.0)
    slope = (dt[:, :, None] * dy).sum(axis=1) / np.where(sxx > 0, sxx, 1.0)[:, None]
    return slope, tbar, sxx


def _transients(z: np.ndarray, kept: np.ndarray, cuts: np.ndarray) -> np.ndarray:
    """A config's cuts (N,) less those around a transient: a segment after which the
    level is back where it was before it (the segments on either side do not differ at
    STEP_ALPHA) is a spell of slow or fast runs, part of how the config scatters, not two
    steps; one such run is an outlier already. Merged until none is left."""
    cuts = cuts.copy()
    limit = tdist.chi2_isf(STEP_ALPHA, z.shape[1])
    while True:
        starts = [0, *np.nonzero(cuts)[0].tolist(), len(cuts)]
        segs = [kept & (np.arange(len(cuts)) >= a) & (np.arange(len(cuts)) < b)
                for a, b in itertools.pairwise(starts)]  # fmt: skip
        merged = False
        for k in range(1, len(segs) - 1):
            before, after = segs[k - 1], segs[k + 1]
            nb, na = int(before.sum()), int(after.sum())
            if not nb or not na:
                continue
            jump = z[after].mean(axis=0) - z[before].mean(axis=0)
            if float((jump * jump).sum()) / (1 / nb + 1 / na) < limit:
                cuts[starts[k]] = cuts[starts[k + 1]] = False
                merged = True
                break
        if not merged:
            return cuts


def shapes(y: np.ndarray, kept: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Each config's shape (C,) and cuts (C, N) from its kept runs' gated deviations."""
    configs, runs, g = y.shape
    n = kept.sum(axis=1)
    flat = np.moveaxis(np.where(kept[:, :, None], y, np.nan), 2, 1).reshape(-1, runs)
    scale = np.maximum(segments.diff_scale(flat, ROBUST_DIFFS), SCALE_FLOOR).reshape(configs, g)
    z = np.where(kept[:, :, None], y / scale[:, None, :], np.nan)
    cuts = np.zeros((configs, runs), dtype=bool)
    with quiet():
        mean = np.nanmean(z, axis=1)
    rss0 = np.nansum((z - mean[:, None, :]) ** 2, axis=(1, 2))
    cuttable = n >= 2 * MIN_SEGMENT + 1
    cost_steps = rss0.copy()
    if cuttable.any():
        pen = np.array([tdist.chi2_isf(STEP_ALPHA / max(int(k) - 1, 1), g) for k in n[cuttable]])
        found = segments.partition(z[cuttable], pen, MIN_SEGMENT)
        cuts[cuttable] = found
        for c in np.nonzero(cuts.any(axis=1))[0]:
            cuts[c] = _transients(z[c], kept[c], cuts[c])
        ids = np.cumsum(cuts, axis=1)
        rss = _rss_segments(np.nan_to_num(z), ids, kept)
        count = cuts.sum(axis=1)
        cost_steps[cuttable] = rss[cuttable] + count[cuttable] * pen
    slope, tbar, sxx = _line(np.nan_to_num(z), kept)
    pos = np.arange(runs, dtype=float)[None, :, None]
    fitted = mean[:, None, :] + slope[:, None, :] * (pos - tbar[:, None, None])
    resid = np.where(kept[:, :, None], (z - fitted) ** 2, np.nan)
    rss1 = np.nansum(resid, axis=(1, 2))
    # a drift: a slope beyond its own standard error (Student's t, n - 2 degrees of
    # freedom, the residuals about the line), two-sided DRIFT_ALPHA, Bonferroni over metrics
    df = np.maximum(n - 2, 1).astype(float)
    with np.errstate(invalid="ignore", divide="ignore"):
        se = np.sqrt(np.nansum(resid, axis=1) / df[:, None] / np.where(sxx > 0, sxx, 1.0)[:, None])
        t = np.abs(slope) / se
    limit = tdist.t_ppf(
        np.full(t.shape, 1 - DRIFT_ALPHA / (2 * g)), np.broadcast_to(df[:, None], t.shape)
    )
    drifts = (n >= DRIFT_MIN) & (np.nan_to_num(t) > limit).any(axis=1)
    # a drift is cut into steps as readily as a line fits it: steps must beat the best
    # line outright, a jump beyond what a slope explains
    stepped = cuts.any(axis=1) & (cost_steps < np.minimum(rss0, rss1))
    shape = np.where(stepped, STEPS, np.where(drifts, LINE, CONST))
    cuts &= stepped[:, None]
    return shape, cuts


def _level_runs(
    kept: np.ndarray, cuts: np.ndarray, shape: np.ndarray
) -> tuple[np.ndarray, np.ndarray]:
    """(level runs, kept runs after them) (C, N): the newest segment of MIN_LEVEL kept runs
    or more; none such (too short) means no cut."""
    ids = np.cumsum(cuts, axis=1)
    most = int(ids.max(initial=0)) + 1
    established = np.full(len(kept), -1)
    for g in range(most):
        enough = ((ids == g) & kept).sum(axis=1) >= MIN_LEVEL
        established = np.where(enough, g, established)
    whole = (shape != STEPS) | (established < 0)
    level = np.where(whole[:, None], kept, kept & (ids == established[:, None]))
    after = np.where(whole[:, None], False, kept & (ids > established[:, None]))
    return level, after


def fit(values: np.ndarray, window: np.ndarray, gated: np.ndarray) -> Model:
    """The model of every config: `values` (C, N, J, M) logs aligned at each config's
    newest run, `window` runs per config, `gated` (M,) the metrics that decide."""
    runs, metrics = values.shape[1], values.shape[3]
    pos = np.arange(runs)
    inwin = (pos[None, :] >= runs - window[:, None]) & _gated_complete(values, gated)
    first = _means(values, inwin)
    y_all = deviations(values, first, weights(values, first, inwin))
    out = outliers(y_all[:, :, gated], inwin)
    kept = inwin & ~out
    shape, cuts = shapes(y_all[:, :, gated], kept)
    level, after = _level_runs(kept, cuts, shape)
    last = np.max(np.where(level, pos[None, :], -1), axis=1)
    provisional = after | (out & (pos[None, :] > last[:, None]))
    n = level.sum(axis=1)
    base = _means(values, level)
    weight = weights(values, base, level)
    dev = deviations(values, base, weight)
    lvl_dev = np.where(level[:, :, None], dev, np.nan)
    with quiet():
        mean_dev = np.nan_to_num(np.nanmean(lvl_dev, axis=1))  # (C, M): ~0
    center = base + mean_dev[:, None, :]
    e = np.where(level[:, :, None], lvl_dev - mean_dev[:, None, :], np.nan)
    n1 = np.maximum(n - 1, 0).astype(float)
    run_df = n1[:, None] * np.ones((1, metrics))
    with quiet():
        run_sd = np.sqrt(np.nansum(e * e, axis=1) / np.maximum(run_df, 1))
    resid = values - base[:, None, :, :] - dev[:, :, None, :]
    resid = np.where(level[:, :, None, None], resid, np.nan)
    points = np.isfinite(base).sum(axis=1)  # (C, M)
    # a point's residual after its run's deviation: its scatter per run, and the degrees of
    # freedom the weighted mean leaves it ((n - 1)(P - 1)/P with equal weights)
    # (C, J, M); a point measured by fewer of the level's runs (a concurrency added to the
    # sweep lately) has its own n - 1, never the config's: one run's residual divided by
    # the config's n - 1 read as a scatter near 0, and every unchanged PR failed there
    squares = np.nansum(resid * resid, axis=1)
    point_n = np.isfinite(resid).sum(axis=1)
    own1 = np.maximum(point_n - 1, 0).astype(float)
    point_sd = np.sqrt(squares / np.maximum(own1, 1))
    point_df = own1 * (1 - weight)
    pooled_sd = np.sqrt(squares.sum(axis=1) / np.maximum(own1.sum(axis=1), 1))
    pooled_df = np.maximum(own1.sum(axis=1) - n1[:, None], 0.0)  # (C, M)
    # too few degrees of freedom of its own: its config's pooled scatter stands in, unless
    # its own residuals, shrunk toward the pool with MIN_DF prior degrees of freedom, show
    # it noisier. GPU noise grows with concurrency, and the pool read the noisiest point as
    # quiet as the rest: on the first H200 set, concurrency 64 measured by main's newest 3
    # runs only failed 28 of 56 unchanged triples, and 8 of 56 against 5 runs in time
    few = point_df < MIN_DF
    pooled_var = np.broadcast_to((pooled_sd * pooled_sd)[:, None, :], point_sd.shape)
    pooled_dfs = np.broadcast_to(pooled_df[:, None, :], point_df.shape)
    shrunk = (point_df * point_sd * point_sd + MIN_DF * pooled_var) / (point_df + MIN_DF)
    noisier = few & (shrunk > pooled_var)
    point_sd = np.where(few, np.sqrt(np.maximum(shrunk, pooled_var)), point_sd)
    point_df = np.where(
        noisier,
        np.minimum(point_df + MIN_DF, np.maximum(pooled_dfs, point_df)),
        np.where(few, pooled_dfs, point_df),
    )
    with quiet():
        own_sd = np.nanstd(np.where(level[:, :, None, None], values, np.nan), axis=1, ddof=1)
    point_sd = np.where(gated[None, None, :], point_sd, own_sd)
    own_df = np.broadcast_to(n1[:, None, None], point_sd.shape)
    point_df = np.where(gated[None, None, :], point_df, own_df)
    point_df = np.where(point_df > 0, point_df, 0.0)
    assumed = run_df < 1
    p = np.maximum(points, 1).astype(float)
    run_sd = np.where(assumed, DEFAULT_NOISE * np.sqrt(RHO + (1 - RHO) / p), run_sd)
    run_df = np.where(assumed, math.inf, run_df)
    point_assumed = assumed[:, None, :] | (point_df < 1)
    # the assumed residual: the run's own share of DEFAULT_NOISE, less what its deviation took
    residual = DEFAULT_NOISE * np.sqrt((1 - RHO) * np.clip(1 - weight, 0.0, 1.0))
    fallback = np.where(gated[None, None, :], np.maximum(residual, FLOOR), DEFAULT_NOISE)
    point_sd = np.where(point_assumed, fallback, point_sd)
    point_df = np.where(point_assumed, math.inf, point_df)
    # a run's deviation is a weighted mean of its points, so it scatters at least as much as
    # their own residuals imply (sum of w^2 s^2); fewer runs can read less by chance
    with quiet():
        implied = np.sqrt(np.nansum(weight * weight * point_sd * point_sd, axis=1))
    run_sd = np.where(assumed | ~gated[None, :], run_sd, np.maximum(run_sd, implied))
    run_sd = np.maximum(run_sd, FLOOR)
    point_sd = np.where(np.isfinite(base), np.maximum(point_sd, FLOOR), np.nan)
    # main's recent level: its provisional runs, else a drift's trend at its newest run
    k_moved = provisional.sum(axis=1)
    prov = _means(values, provisional) - center
    slope, tbar, sxx = _line(lvl_dev, level)
    drift = (shape == LINE) & (k_moved == 0)
    slope = np.where(drift[:, None] & gated[None, :], slope, 0.0)
    ahead = (runs - 1) - tbar  # main's newest run, from the level's mean position
    trend = np.where(np.isfinite(base), (slope * ahead[:, None])[:, None, :], np.nan)
    moved = np.where(
        (k_moved > 0)[:, None, None], prov, np.where(drift[:, None, None], trend, np.nan)
    )
    trend_lag = 1 / np.maximum(n, 1) + ahead * ahead / np.where(sxx > 0, sxx, 1.0)
    recent_lag = np.where(k_moved > 0, 1 / np.maximum(k_moved, 1), trend_lag)
    return Model(
        center=center,
        base=base,
        offset=mean_dev,
        n=n,
        run_sd=run_sd,
        run_df=run_df,
        point_sd=point_sd,
        point_df=point_df,
        assumed=assumed,
        points=points,
        moved=moved,
        k_moved=k_moved,
        recent=(k_moved > 0) | drift,
        recent_lag=recent_lag,
        shape=shape,
        slope=slope,
        level=level,
        outlier=out,
        provisional=provisional,
        cuts=cuts,
        window=pos[None, :] >= runs - window[:, None],
        kept=kept,
        dev=dev,
        weight=weight,
        point_n=point_n,
    )
