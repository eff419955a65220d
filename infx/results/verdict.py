"""A pull request's results against main's history: a verdict per check, point, config and
run, and whether the gate passes.

Pure: rows and results documents in, values out. `history` is main's runs as results
documents (format infx-results/1, `doc["run"]` naming the run), oldest first.

- A **check** is one metric of one point (CHECKS: throughput per GPU, TTFT p50 and p99,
  TPOT p50 and p99). Main's level and scatter come from `infx.results.noise`; the change
  is within noise while it stays inside the band (the larger of `threshold` percent and the
  prediction interval); a change exactly on the band's edge is within noise.
- A **point** (config, concurrency) is regressed when any of its checks regressed, else
  improved when any improved, else within noise; `new` when main never measured it,
  `missing` when main's newest run of the config measured it and the PR did not.
- A **curve** compares throughput per GPU at matched interactivity: each PR point against
  main's Pareto frontier (through main's levels) interpolated at the point's interactivity,
  averaged over the points inside the frontier's range; and at equal concurrency: each PR
  point against its own level, averaged. Main's own runs measured the same way give each
  average's history, hence its level and scatter.
- A **config** is regressed (a point, its curve or an accuracy score regressed), else
  coverage lost (a point or score missing, or a config of the same family that main
  measured and the PR did not), else improved, else within noise; `new` without history.
- The **run** takes the worst config in that order; the gate fails on regressed or
  coverage lost unless acknowledged.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass, field, replace
from typing import Any

import numpy as np

from infx.results import noise
from infx.results.compare import (
    CHECKS,
    COMPARED,
    COVERAGE_LOST,
    DEFAULT_THRESHOLD,
    IMPROVED,
    INTERACTIVITY_METRIC,
    MISSING,
    NEW,
    NOISE,
    REGRESSED,
    UNKNOWN,
    Metric,
    config_label,
    family_key,
    index,
    interactivity,
    judge_score,
)

FORMAT = "infx-verdict/1"
# Order of severity: the run and a config take the first that applies.
SEVERITY = (REGRESSED, COVERAGE_LOST, IMPROVED, NOISE, NEW)
_EDGE = 1e-9  # percent: a change on the band's edge (give or take float error) is noise


@dataclass(frozen=True)
class Check:
    metric: Metric
    before: float | None  # main's level (stored units)
    after: float | None
    change_pct: float | None
    band_pct: float | None
    noise_pct: float | None  # main's relative scatter, percent
    history: int  # main's runs behind the level (newest segment)
    assumed: bool  # scatter assumed (DEFAULT_NOISE): history too short
    verdict: str


@dataclass(frozen=True)
class Point:
    conc: int
    status: str  # compared | new | missing
    verdict: str
    checks: tuple[Check, ...] = ()
    main: dict[str, Any] | None = None  # main's newest row (missing points: its numbers)
    # checks: CHECKS, then interactivity, shown only (it is TPOT p50 again, never counted)
    pr: dict[str, Any] | None = None


@dataclass(frozen=True)
class Curve:
    matched: int  # PR points inside main's interactivity range
    change_pct: float | None
    band_pct: float | None
    noise_pct: float | None
    history: int
    assumed: bool
    verdict: str
    frontier: tuple[tuple[float, float], ...] = ()  # main's (interactivity, tput/GPU)


@dataclass(frozen=True)
class Score:
    conc: int
    task: str
    metric: str
    filter: str
    status: str
    before: float | None
    before_stderr: float | None
    after: float | None
    after_stderr: float | None
    verdict: str


@dataclass(frozen=True)
class Config:
    key: str
    kind: str
    label: str
    identity: dict[str, Any]
    verdict: str
    points: tuple[Point, ...] = ()
    scores: tuple[Score, ...] = ()
    curve: Curve | None = None  # throughput per GPU at matched interactivity
    level: Curve | None = None  # throughput per GPU at equal concurrency, over the points
    runs: int = 0  # main runs in the window that measured this config
    baseline: dict[str, Any] | None = None  # the newest of them: doc["run"]
    only_main: bool = False  # main measured it; the PR did not

    def count(self, verdict: str) -> int:
        """Points with this verdict; accuracy scores count as points."""
        return sum(1 for p in self.points if p.verdict == verdict) + sum(
            1 for s in self.scores if _score_verdict(s) == verdict
        )


@dataclass(frozen=True)
class Ack:
    by: str  # "label" or "comment"
    who: str  # the label's name or the commenter
    url: str | None = None
    comment_id: int | None = None  # the acknowledging comment


@dataclass(frozen=True)
class Report:
    configs: tuple[Config, ...]
    verdict: str
    threshold: float
    runs: int  # main runs in the history
    notes: tuple[str, ...] = field(default_factory=tuple)
    ack: Ack | None = None

    @property
    def failing(self) -> bool:
        """Regressed or coverage lost: the gate fails unless acknowledged."""
        return self.verdict in (REGRESSED, COVERAGE_LOST)

    @property
    def passed(self) -> bool:
        return not self.failing or self.ack is not None

    def points(self, verdict: str) -> int:
        """Points (not metric cells) with this verdict; accuracy scores count as points."""
        return sum(c.count(verdict) for c in self.configs)

    def configs_with(self, verdict: str) -> int:
        return sum(1 for c in self.configs if c.verdict == verdict)


def _score_verdict(score: Score) -> str:
    if score.status != COMPARED:
        return score.status
    return score.verdict if score.verdict != UNKNOWN else NOISE


def worst(verdicts: Sequence[str]) -> str:
    for verdict in SEVERITY:
        if verdict in verdicts:
            return verdict
    return NEW


# --- one check ---------------------------------------------------------------------


def direction(change_pct: float, band_pct: float, higher_is_better: bool) -> str:
    """Within the band (its edge included, give or take float error) is noise."""
    if abs(change_pct) <= band_pct + _EDGE:
        return NOISE
    return IMPROVED if (change_pct > 0) == higher_is_better else REGRESSED


def judge(
    metric: Metric,
    level: noise.Level | None,
    after: float | None,
    pool: tuple[float | None, int],
    threshold: float,
) -> Check:
    if level is not None and after == 0 and metric.higher_is_better:
        # Nothing came through (the schema allows 0): no band holds a -100 % change.
        return Check(metric, level.value, after, -100.0, None, None, level.k, False, REGRESSED)
    if level is None or after is None or after <= 0:
        before = level.value if level is not None else None
        return Check(metric, before, after, None, None, None, 0, False, UNKNOWN)
    band = noise.band(level, pool, threshold)
    before = level.value
    change = (after / before - 1.0) * 100.0
    verdict = direction(change, band.pct, metric.higher_is_better)
    return Check(
        metric, before, after, change, band.pct, band.sigma * 100, level.k, band.assumed, verdict
    )


# --- history ---------------------------------------------------------------------------


@dataclass
class _History:
    """Main's runs indexed once: per run (oldest first), (kind|config) -> conc -> row."""

    runs: list[dict[str, Any]]
    points: list[dict[str, dict[int, dict[str, Any]]]]
    families: list[dict[str, list[str]]]

    @classmethod
    def of(
        cls,
        docs: Sequence[dict[str, Any]],
        notes: list[str] | None = None,
        names: dict[str, str] | None = None,
    ) -> _History:
        names = {} if names is None else names
        runs, points, families = [], [], []
        for doc in docs:
            indexed = index(doc.get("rows", []), notes, "main", twice=False, names=names)
            runs.append(dict(doc.get("run") or {}))
            points.append(indexed)
            fam: dict[str, list[str]] = {}
            for key, by_conc in indexed.items():
                row = next(iter(by_conc.values()))
                fam.setdefault(family_key(row["kind"], row["identity"]), []).append(key)
            families.append(fam)
        return cls(runs, points, families)

    def holding(self, key: str) -> list[int]:
        return [i for i, p in enumerate(self.points) if key in p]


def _value(row: dict[str, Any], key: str) -> float | None:
    value = row.get("metrics", {}).get(key)
    return value if isinstance(value, int | float) and value > 0 else None


def _measured(row: dict[str, Any], key: str) -> float | None:
    """The PR's value as judged: 0 too (a throughput of 0 is a regression, not n/a)."""
    value = row.get("metrics", {}).get(key)
    return value if isinstance(value, int | float) and value >= 0 else None


_METRICS = (*(c.key for c in CHECKS), "intvty")
_CURVE = ("tput_per_gpu", "intvty")  # the series main's Pareto curve is drawn from


def _point_series(
    history: _History, runs: list[int], key: str, conc: int
) -> dict[str, tuple[np.ndarray, list[int]]]:
    """Each metric's log values over the runs that measured the point, and their positions
    in `runs` (one pass over the runs for every metric)."""
    found: dict[str, tuple[list[float], list[int]]] = {m: ([], []) for m in _METRICS}
    for pos, i in enumerate(runs):
        row = history.points[i][key].get(conc)
        if row is None:
            continue
        metrics = row.get("metrics", {})
        for metric in _METRICS:
            v = interactivity(metrics) if metric == "intvty" else metrics.get(metric)
            if isinstance(v, int | float) and v > 0:
                values, where = found[metric]
                values.append(v)
                where.append(pos)
    return {m: (noise.logs(v), w) for m, (v, w) in found.items() if v}


def _levels(
    series: list[np.ndarray], where: list[list[int]], pending: list[_Pending]
) -> list[noise.Level]:
    """Each series' level, cut at its own change points and at its config's joint ones."""
    own = noise.break_points(series)
    merged = [set(b) for b in own]
    for job in pending:
        slots = [i for (_, m), i in job.slots.items() if m != "intvty"]
        complete = [i for i in slots if len(where[i]) == len(job.runs)]
        job.joint = noise.joint_breaks([series[i] for i in complete]) if complete else ()
        for i in job.slots.values():
            merged[i] |= _mapped(job.joint, where[i])
    return [noise.level(x, tuple(sorted(m))) for x, m in zip(series, merged, strict=True)]


def _mapped(breaks: tuple[int, ...], where: list[int]) -> set[int]:
    """Change points at run positions, as indexes into a series measured at `where`."""
    out = set()
    for b in breaks:
        position = next((p for p, run in enumerate(where) if run >= b), None)
        if position:
            out.add(position)
    return out


# --- curves -------------------------------------------------------------------------------


def frontier(points: Sequence[tuple[float, float]]) -> list[tuple[float, float]]:
    """The points no other point beats on both axes, by rising interactivity."""
    best: list[tuple[float, float]] = []
    for point in sorted(points, key=lambda p: (-p[0], -p[1])):
        if not best or point[1] > best[-1][1]:
            best.append(point)
    return sorted(best)


def _gap(
    edge: list[tuple[float, float]], points: Sequence[tuple[float, float]]
) -> tuple[list[float], list[float]]:
    """log(throughput / main's frontier at the same interactivity) of each point in range,
    and the frontier's elasticity there (d log throughput / d log interactivity), which
    carries the noise of interactivity into the gap."""
    if len(edge) < 2 or not points:
        return [], []
    xs = np.array([p[0] for p in edge])
    ys = np.log([p[1] for p in edge])
    px = np.array([p[0] for p in points])
    py = np.array([p[1] for p in points])
    inside = (px >= xs[0]) & (px <= xs[-1]) & (py > 0)
    px, py = px[inside], py[inside]
    gaps = np.log(py) - np.interp(px, xs, ys)
    i = np.clip(np.searchsorted(xs, px), 1, len(xs) - 1)
    run = np.log(xs[i] / xs[i - 1])
    with np.errstate(divide="ignore", invalid="ignore"):
        slopes = np.where(run > 0, (ys[i] - ys[i - 1]) / np.where(run > 0, run, 1), 0.0)
    return gaps.tolist(), slopes.tolist()


def _xy(row: dict[str, Any]) -> tuple[float, float] | None:
    x, y = interactivity(row.get("metrics", {})), _value(row, "tput_per_gpu")
    return (x, y) if x and y else None


# --- the comparison -------------------------------------------------------------------


@dataclass
class _Pending:
    """A throughput config under way: its series are estimated for all configs at once."""

    key: str
    identity: dict[str, Any]
    mine: dict[int, dict[str, Any]]
    runs: list[int]
    expected: set[int]
    slots: dict[tuple[int, str], int] = field(default_factory=dict)  # (conc, metric) -> series
    joint: tuple[int, ...] = ()  # the config's shared change points (positions in runs)


def compare(
    rows: Sequence[dict[str, Any]],
    history: Sequence[dict[str, Any]],
    threshold: float = DEFAULT_THRESHOLD,
    *,
    trimmed: bool = False,
) -> Report:
    """Judge `rows` (this run) against `history` (main's runs, oldest first). A `trimmed`
    run measured each curve at its lowest concurrency only: the points it did not plan are
    missing, but not coverage lost."""
    notes: list[str] = []
    names: dict[str, str] = {}
    mine = index(rows, notes, "this run", names=names)
    hist = _History.of(history, notes, names)
    series: list[np.ndarray] = []
    where: list[list[int]] = []
    pending: list[_Pending] = []
    configs: list[Config] = []

    for key, points in mine.items():
        kind = key.split("|", 1)[0]
        ident = {k: v for k, v in next(iter(points.values()))["identity"].items() if k != "conc"}
        runs = hist.holding(key)
        if kind == "accuracy":
            configs.append(_accuracy(key, ident, points, hist, runs))
            continue
        expected = set(hist.points[runs[-1]][key]) if runs else set()
        job = _Pending(key, ident, points, runs, expected)
        for conc in sorted(set(points) | expected):
            if not runs:
                continue
            for metric, (values, at) in _point_series(hist, runs, key, conc).items():
                if conc not in points and metric not in _CURVE:
                    continue  # a point the PR did not measure still draws main's curve
                job.slots[(conc, metric)] = len(series)
                series.append(values)
                where.append(at)
        pending.append(job)

    levels = _levels(series, where, pending)
    aggregates = _aggregates(pending, levels, hist, threshold)
    for job, (curve, level) in zip(pending, aggregates, strict=True):
        configs.append(_throughput(job, levels, hist, curve, level, threshold, trimmed))
    configs.extend(_lost_configs(mine, hist))
    configs.sort(key=lambda c: (SEVERITY.index(c.verdict), c.label, c.key))
    overall = worst([c.verdict for c in configs]) if configs else NEW
    return Report(tuple(configs), overall, threshold, len(history), tuple(dict.fromkeys(notes)))


def _throughput(
    job: _Pending,
    levels: list[noise.Level],
    hist: _History,
    curve: Curve | None,
    level: Curve | None,
    threshold: float,
    trimmed: bool = False,
) -> Config:
    pools = {
        c.key: noise.pooled(
            [levels[i] for (conc, m), i in job.slots.items() if m == c.key and conc in job.mine]
        )
        for c in CHECKS
    }
    newest = hist.points[job.runs[-1]][job.key] if job.runs else {}
    points = []
    for conc in sorted(set(job.mine) | job.expected):
        pr, main = job.mine.get(conc), newest.get(conc)
        if pr is None:
            points.append(Point(conc, MISSING, MISSING, main=main))
            continue
        if not any((conc, c.key) in job.slots for c in CHECKS):
            points.append(Point(conc, NEW, NEW, pr=pr, main=main))
            continue
        checks = tuple(
            judge(
                c,
                levels[job.slots[(conc, c.key)]] if (conc, c.key) in job.slots else None,
                _measured(pr, c.key),
                pools[c.key],
                threshold,
            )
            for c in CHECKS
        )
        verdict = worst([c.verdict for c in checks if c.verdict != UNKNOWN] or [NOISE])
        x = job.slots.get((conc, "intvty"))
        shown = judge(
            INTERACTIVITY_METRIC,
            levels[x] if x is not None else None,
            interactivity(pr.get("metrics", {})),
            (None, 0),
            threshold,
        )
        checks = (*checks, replace(shown, verdict=UNKNOWN))
        points.append(Point(conc, COMPARED, verdict, checks, main, pr))
    parts = [
        COVERAGE_LOST if p.status == MISSING else p.verdict
        for p in points
        if not (trimmed and p.status == MISSING)
    ]
    parts += [m.verdict for m in (curve, level) if m is not None]
    verdict = worst(parts) if job.runs else NEW
    return Config(
        key=job.key,
        kind="throughput",
        label=config_label({**job.identity, "conc": 0}),
        identity=job.identity,
        verdict=verdict,
        points=tuple(points),
        curve=curve,
        level=level,
        runs=len(job.runs),
        baseline=hist.runs[job.runs[-1]] if job.runs else None,
    )


def _aggregates(
    pending: list[_Pending], levels: list[noise.Level], hist: _History, threshold: float
) -> list[tuple[Curve | None, Curve | None]]:
    """Each config's two curve measures and their histories, estimated together:
    throughput per GPU at matched interactivity (against main's frontier) and at equal
    concurrency (against each point's level), each a mean over the config's points."""
    measures: list[np.ndarray] = []
    staged: list[tuple[int, list[float], list[float], tuple[tuple[float, float], ...]]] = []
    pools: list[tuple[float | None, int]] = []  # each job's pooled throughput scatter
    owners: list[tuple[int, int]] = []  # (job, 0 curve | 1 equal concurrency)
    joints: list[set[int]] = []
    for j, job in enumerate(pending):
        pools.append(
            noise.pooled([levels[i] for (conc, m), i in job.slots.items() if m == "tput_per_gpu"])
        )
        ref = []
        for conc in sorted(job.expected | set(job.mine)):
            xi, yi = job.slots.get((conc, "intvty")), job.slots.get((conc, "tput_per_gpu"))
            if xi is not None and yi is not None:
                ref.append((levels[xi].value, levels[yi].value))
        edge = frontier(ref)
        mine, slopes = _gap(edge, [xy for xy in map(_xy, job.mine.values()) if xy])
        past, at = [], []
        for pos, i in enumerate(job.runs):
            found, _ = _gap(edge, [xy for xy in map(_xy, hist.points[i][job.key].values()) if xy])
            if len(found) >= 2:
                past.append(float(np.mean(found)))
                at.append(pos)
        if len(mine) >= 2 and past:
            owners.append((j, 0))
            staged.append((len(measures), mine, slopes, tuple(edge)))
            measures.append(np.array(past))
            joints.append(_mapped(job.joint, at))
        centers = {
            conc: levels[i].center
            for (conc, m), i in job.slots.items()
            if m == "tput_per_gpu" and conc in job.mine
        }
        same = _offsets(job.mine, centers)
        past, at = [], []
        for pos, i in enumerate(job.runs):
            found = _offsets(hist.points[i][job.key], centers)
            if len(found) >= 2:
                past.append(float(np.mean(found)))
                at.append(pos)
        if len(same) >= 2 and past:
            owners.append((j, 1))
            staged.append((len(measures), same, [0.0] * len(same), ()))
            measures.append(np.array(past))
            joints.append(_mapped(job.joint, at))
    found_levels = [
        noise.level(x, tuple(sorted(set(own) | joint)))
        for x, own, joint in zip(measures, noise.break_points(measures), joints, strict=True)
    ]
    out: list[list[Curve | None]] = [[None, None] for _ in pending]
    for (j, which), (slot, mine, slopes, edge) in zip(owners, staged, strict=True):
        out[j][which] = _measure(found_levels[slot], mine, slopes, edge, threshold, pools[j])
    return [(a, b) for a, b in out]


def _offsets(points: dict[int, dict[str, Any]], centers: dict[int, float]) -> list[float]:
    """log(throughput / main's level at the same concurrency) of each point with a level."""
    out = []
    for conc, row in points.items():
        value = _value(row, "tput_per_gpu")
        if conc in centers and value is not None:
            out.append(math.log(value) - centers[conc])
    return out


def _measure(
    lv: noise.Level,
    mine: list[float],
    slopes: list[float],
    edge: tuple[tuple[float, float], ...],
    threshold: float,
    point: tuple[float | None, int] = (None, 0),
) -> Curve:
    change = (math.exp(float(np.mean(mine)) - lv.center) - 1.0) * 100.0
    if lv.sigma is None:
        # No scatter of the measure itself: the per-point noise (the config's pooled
        # throughput scatter, else the assumed one), carried through the frontier's slope
        # (interactivity is measured too) and averaged over the points.
        base, df = point if point[0] is not None else (noise.DEFAULT_NOISE, None)
        sigma = base * math.sqrt(sum(1 + s * s for s in slopes)) / len(mine)
        width = 100.0 * noise.critical(df) * sigma * math.sqrt(1 + 1 / max(lv.k, 1))
        band = noise.Band(max(threshold, width), sigma, point[0] is None)
    else:
        band = noise.band(lv, (None, 0), threshold)
    verdict = direction(change, band.pct, higher_is_better=True)
    return Curve(len(mine), change, band.pct, band.sigma * 100, lv.k, band.assumed, verdict, edge)


def _stderr(score: dict[str, Any]) -> float | None:
    """The score's standard error; without one (lm-eval's "N/A"), the binomial error of a
    rate over its samples, so a drop is never 'n/a' merely for want of a stderr."""
    stderr = score.get("stderr")
    if stderr is not None:
        return stderr
    value, samples = score.get("value"), score.get("samples")
    rate = isinstance(value, int | float) and 0 <= value <= 1
    if rate and isinstance(samples, int) and samples > 0:
        return math.sqrt(value * (1 - value) / samples)
    return None


def _accuracy(
    key: str,
    ident: dict[str, Any],
    points: dict[int, dict[str, Any]],
    hist: _History,
    runs: list[int],
) -> Config:
    newest = hist.points[runs[-1]][key] if runs else {}
    scores = []
    for conc in sorted(set(points) | set(newest)):
        a = {
            (s["task"], s["metric"], s["filter"]): s
            for s in points.get(conc, {}).get("accuracy", [])
        }
        b = {
            (s["task"], s["metric"], s["filter"]): s
            for s in newest.get(conc, {}).get("accuracy", [])
        }
        for k in sorted(set(a) | set(b)):
            sa, sb = a.get(k), b.get(k)
            status = COMPARED if sa and sb else (NEW if sa else MISSING)
            verdict = (
                judge_score(sb["value"], _stderr(sb), sa["value"], _stderr(sa))
                if sa and sb
                else status
            )
            scores.append(
                Score(
                    conc,
                    *k,
                    status,
                    sb["value"] if sb else None,
                    sb.get("stderr") if sb else None,
                    sa["value"] if sa else None,
                    sa.get("stderr") if sa else None,
                    verdict,
                )
            )
    parts = [_score_verdict(s) for s in scores]
    parts = [COVERAGE_LOST if p == MISSING else p for p in parts]
    return Config(
        key=key,
        kind="accuracy",
        label=config_label({**ident, "conc": 0}),
        identity=ident,
        verdict=worst(parts) if runs else NEW,
        scores=tuple(scores),
        runs=len(runs),
        baseline=hist.runs[runs[-1]] if runs else None,
    )


def _lost_configs(mine: dict[str, dict[int, dict[str, Any]]], hist: _History) -> list[Config]:
    """Configs of a family this run measured that main's newest run of that family has
    and this run lacks: publishing this run would drop their curves."""
    families: dict[str, set[str]] = {}
    for key, points in mine.items():
        row = next(iter(points.values()))
        families.setdefault(family_key(row["kind"], row["identity"]), set()).add(key)
    out = []
    for family, keys in families.items():
        newest = next(
            (i for i in reversed(range(len(hist.points))) if family in hist.families[i]), None
        )
        if newest is None:
            continue
        for key in hist.families[newest][family]:
            if key in keys:
                continue
            by_conc = hist.points[newest][key]
            row = next(iter(by_conc.values()))
            ident = {k: v for k, v in row["identity"].items() if k != "conc"}
            if row["kind"] == "accuracy":
                scores = tuple(
                    Score(
                        c,
                        s["task"],
                        s["metric"],
                        s["filter"],
                        MISSING,
                        s["value"],
                        s.get("stderr"),
                        None,
                        None,
                        MISSING,
                    )
                    for c, r in sorted(by_conc.items())
                    for s in r.get("accuracy", [])
                )
                points: tuple[Point, ...] = ()
            else:
                scores = ()
                points = tuple(
                    Point(c, MISSING, MISSING, main=r) for c, r in sorted(by_conc.items())
                )
            out.append(
                Config(
                    key=key,
                    kind=row["kind"],
                    label=config_label(row["identity"]),
                    identity=ident,
                    verdict=COVERAGE_LOST,
                    points=points,
                    scores=scores,
                    runs=len(hist.holding(key)),
                    baseline=hist.runs[newest],
                    only_main=True,
                )
            )
    return out


def acknowledged(report: Report, ack: Ack | None) -> Report:
    return replace(report, ack=ack) if report.failing and ack is not None else report


# --- JSON ---------------------------------------------------------------------------------


def _check_json(check: Check) -> dict[str, Any]:
    return {
        "metric": check.metric.key,
        "before": check.before,
        "after": check.after,
        "change_pct": check.change_pct,
        "band_pct": check.band_pct,
        "noise_pct": check.noise_pct,
        "history": check.history,
        "noise_assumed": check.assumed,
        "verdict": check.verdict,
    }


def _metrics(row: dict[str, Any] | None) -> dict[str, Any] | None:
    if row is None:
        return None
    keys = [c.key for c in CHECKS] + ["median_intvty", "mean_intvty"]
    return {k: row["metrics"][k] for k in keys if k in row.get("metrics", {})}


def _curve_json(curve: Curve | None) -> dict[str, Any] | None:
    if curve is None:
        return None
    return {
        "matched": curve.matched,
        "change_pct": curve.change_pct,
        "band_pct": curve.band_pct,
        "noise_pct": curve.noise_pct,
        "history": curve.history,
        "noise_assumed": curve.assumed,
        "verdict": curve.verdict,
    }


def to_json(report: Report) -> dict[str, Any]:
    """The verdict as schemas/results-verdict.schema.json describes it."""
    counts = {v: report.points(v) for v in (IMPROVED, REGRESSED, NOISE, NEW, MISSING)}
    configs = []
    for c in report.configs:
        entry: dict[str, Any] = {
            "key": c.key,
            "kind": c.kind,
            "label": c.label,
            "identity": c.identity,
            "verdict": c.verdict,
            "only_main": c.only_main,
            "history_runs": c.runs,
            "baseline": c.baseline,
            "points": [
                {
                    "conc": p.conc,
                    "status": p.status,
                    "verdict": p.verdict,
                    "checks": [_check_json(ch) for ch in p.checks],
                    "main": _metrics(p.main),
                    "pr": _metrics(p.pr),
                }
                for p in c.points
            ],
            "scores": [
                {
                    "conc": s.conc,
                    "task": s.task,
                    "metric": s.metric,
                    "filter": s.filter,
                    "status": s.status,
                    "before": s.before,
                    "before_stderr": s.before_stderr,
                    "after": s.after,
                    "after_stderr": s.after_stderr,
                    "verdict": s.verdict,
                }
                for s in c.scores
            ],
            "curve": _curve_json(c.curve),
            "equal_concurrency": _curve_json(c.level),
        }
        configs.append(entry)
    ack = None
    if report.ack is not None:
        ack = {"by": report.ack.by, "who": report.ack.who, "url": report.ack.url}
    return {
        "format": FORMAT,
        "verdict": report.verdict,
        "gate": {"passed": report.passed, "failing": report.failing, "acknowledged": ack},
        "points": counts,
        "configs_by_verdict": {v: report.configs_with(v) for v in SEVERITY},
        "method": {
            "threshold_pct": report.threshold,
            "alpha": noise.ALPHA,
            "min_history": noise.MIN_HISTORY,
            "default_noise_pct": noise.DEFAULT_NOISE * 100,
            "history_runs": report.runs,
            "checks": [c.key for c in CHECKS],
        },
        "notes": list(report.notes),
        "configs": configs,
    }
