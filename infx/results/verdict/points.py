"""Verdicts as values: each check of a point, a point from its checks, a config from its
tests (`infx.results.verdict.decide`), curves and accuracy scores, and the configs of a family main
measured that this run lacks."""

from __future__ import annotations

import math
from dataclasses import dataclass
from functools import cached_property
from typing import Any

import numpy as np

from infx.results.noise.model import LINE, MIN_LEVEL, Model
from infx.results.noise.series import GATING, History, Pending, measured
from infx.results.table.keys import config_label, family_key
from infx.results.table.metrics import CHECKS, INTERACTIVITY_METRIC
from infx.results.table.rows import Accuracy, Row, config_identity, metrics_of
from infx.results.verdict import repeats as priced
from infx.results.verdict.curves import Measured
from infx.results.verdict.decide import Decision
from infx.results.verdict.power import Power
from infx.results.verdict.report import (
    FEW_RUNS,
    MAIN_MOVED,
    NEEDS_RUNS,
    Check,
    Config,
    Curve,
    Point,
    Repeats,
    Score,
    worst,
)
from infx.results.verdict.report import Power as MetricPower
from infx.results.verdict.words import (
    COMPARED,
    COVERAGE_LOST,
    IMPROVED,
    MISSING,
    NEW,
    NOISE,
    REGRESSED,
    UNCONFIRMED,
    UNKNOWN,
)


@dataclass(frozen=True)
class Judged:
    """Everything the model found, for every pending config at once."""

    fit: Model
    decision: Decision
    power: Power
    curves: Measured
    pr: np.ndarray  # (C, J, M) this PR's runs pooled (log)
    threshold: float

    @cached_property
    def lists(self) -> Lists:
        return Lists(self)


class Lists:
    """What a point's checks read, as nested Python lists, once: reading NumPy arrays one
    scalar at a time took 0.4 s of a 2,000-point comparison. The values are the arrays'
    own (a float64 is a Python float), so no verdict changes."""

    def __init__(self, j: Judged) -> None:
        fit, dec, pw = j.fit, j.decision, j.power
        self.center: list[Any] = fit.center.tolist()
        self.pr: list[Any] = j.pr.tolist()
        self.judged: list[Any] = (dec.base.valid | dec.base.shown).tolist()
        self.worse: list[Any] = dec.worse.tolist()
        self.better: list[Any] = dec.better.tolist()
        self.worse_moved: list[Any] = dec.regressed.points_moved.tolist()
        self.better_moved: list[Any] = dec.improved.points_moved.tolist()
        self.p_worse: list[Any] = dec.regressed.tests.points.tolist()
        self.p_better: list[Any] = dec.improved.tests.points.tolist()
        self.moved: list[Any] = fit.moved.tolist()
        self.k_moved: list[Any] = fit.k_moved.tolist()
        self.point_sd: list[Any] = fit.point_sd.tolist()
        self.run_sd: list[Any] = fit.run_sd.tolist()
        self.n: list[Any] = fit.n.tolist()
        self.assumed: list[Any] = fit.assumed.tolist()
        self.band: list[Any] = pw.band.tolist()
        self.detectable: list[Any] = pw.detectable.tolist()
        self.beyond: list[Any] = pw.advisory.tolist()


def _num(value: Any) -> float | None:
    return float(value) if value is not None and np.isfinite(value) else None


def _finite(value: float) -> float | None:
    return value if math.isfinite(value) else None


def _after(rows: list[Row], key: str, mean_log: float) -> float | None:
    """This PR's value: the one run's (0 included), else the runs' geometric mean."""
    if len(rows) == 1:
        return measured(rows[0], key)
    return math.exp(mean_log) if math.isfinite(mean_log) else None


def _checks(j: Judged, c: int, i: int, rows: list[Row], moved: bool) -> list[Check]:
    """The gating checks of one point, each metric's numbers read from the point's own
    rows of `Lists` (a few subscripts per metric instead of four per number)."""
    at = j.lists
    center, pr, judged = at.center[c][i], at.pr[c][i], at.judged[c][i]
    worse, better = at.worse[c][i], at.better[c][i]
    worse_moved, better_moved = at.worse_moved[c][i], at.better_moved[c][i]
    p_worse, p_better, moved_by = at.p_worse[c][i], at.p_better[c][i], at.moved[c][i]
    point_sd, run_sd, assumed = at.point_sd[c][i], at.run_sd[c], at.assumed[c]
    band, detectable, beyond = at.band[c][i], at.detectable[c][i], at.beyond[c][i]
    n, k_moved = int(at.n[c]), at.k_moved[c]
    out = []
    for m in range(GATING):
        metric = CHECKS[m]
        level = center[m]
        before = math.exp(level) if math.isfinite(level) else None
        after = _after(rows, metric.key, pr[m])
        if before is not None and after == 0 and metric.higher_is_better and metric.gates:
            # Nothing came through (the schema allows 0): no band holds a -100 % change.
            out.append(Check(metric, before, after, -100.0, None, None, n, False, REGRESSED))
            continue
        if before is None or after is None or after <= 0 or not judged[m]:
            out.append(Check(metric, before, after, None, None, None, 0, False, UNKNOWN,
                             advisory=not metric.gates))  # fmt: skip
            continue
        change = (after / before - 1.0) * 100.0
        if not metric.gates:
            verdict = NOISE
        elif worse[m]:
            verdict = UNCONFIRMED if moved or worse_moved[m] else REGRESSED
        elif better[m] and not better_moved[m]:
            verdict = IMPROVED
        else:
            verdict = NOISE
        higher = metric.higher_is_better
        p = p_worse[m] if (change < 0) == higher else p_better[m]
        shift = moved_by[m]
        provisional = k_moved > 0 and math.isfinite(shift)
        sd = point_sd[m]
        if metric.gates:
            sd = math.hypot(run_sd[m], sd)
        out.append(
            Check(
                metric,
                before,
                after,
                change,
                _finite(band[m]),
                float(math.expm1(sd) * 100),
                n,
                bool(assumed[m]),
                verdict,
                p_value=_finite(p),
                detectable_pct=_finite(detectable[m]),
                moved_pct=float(math.expm1(shift) * 100) if provisional else None,
                moved_runs=int(k_moved) if provisional else 0,
                runs=len(rows),
                advisory=not metric.gates,
                beyond=bool(beyond[m]),
            )
        )
    return out


def _shown(j: Judged, c: int, i: int, rows: list[Row]) -> Check:
    """Interactivity: TPOT p50 again, shown, never counted."""
    at = j.lists
    center = at.center[c][i][len(CHECKS)]
    before = math.exp(center) if math.isfinite(center) else None
    mean = at.pr[c][i][len(CHECKS)]
    after = math.exp(mean) if math.isfinite(mean) else None
    change = (after / before - 1) * 100 if before and after else None
    k = int(at.n[c])
    assumed = bool(at.assumed[c][len(CHECKS)])
    return Check(INTERACTIVITY_METRIC, before, after, change, None, None, k, assumed, UNKNOWN)


def _level(j: Judged, c: int, moved: bool) -> Curve | None:
    """Throughput per GPU at equal concurrency: the config-mean test of throughput."""
    dec, pw = j.decision, j.power
    n = int(dec.base.count[c, 0])
    if n < 2:
        return None
    if dec.regressed.means[c, 0]:
        verdict = UNCONFIRMED if moved else REGRESSED
    elif dec.improved.means[c, 0] and not dec.improved.moved[c]:
        verdict = IMPROVED
    else:
        verdict = NOISE
    change = float(np.expm1(dec.base.mean[c, 0]) * 100)
    p = dec.regressed.tests.means[c, 0] if change < 0 else dec.improved.tests.means[c, 0]
    return Curve(
        n,
        change,
        _num(pw.mean_band[c, 0]),
        _num(pw.mean_noise[c, 0]),
        int(j.fit.n[c]),
        bool(j.fit.assumed[c, 0]),
        verdict,
        p_value=_num(p),
        detectable_pct=_num(pw.mean_detectable[c, 0]),
    )


def _curve(j: Judged, c: int) -> Curve | None:
    """Throughput per GPU at matched interactivity, or why it says nothing. Advisory: its
    verdict says whether it moved beyond its band, and never counts (throughput and TPOT,
    its ingredients, gate)."""
    m = j.curves
    if m.matched[c] < 2 or not np.isfinite(m.mine[c]):
        return None
    why = m.why[c]
    dec = j.decision
    if why is not None:
        return Curve(int(m.matched[c]), None, None, None, int(m.k[c]), False, UNKNOWN,
                     m.edges[c], why=why, advisory=True)  # fmt: skip
    change = float(m.change[c])
    band = max(j.threshold, float(m.band[c]))
    verdict = NOISE if abs(change) <= band + 1e-9 else IMPROVED if change > 0 else REGRESSED
    p = dec.regressed.curve_p[c] if change < 0 else dec.improved.curve_p[c]
    return Curve(
        int(m.matched[c]),
        change,
        _num(band),
        _num(math.expm1(float(m.sigma[c])) * 100),
        int(m.k[c]),
        False,
        verdict,
        m.edges[c],
        p_value=_num(p),
        advisory=True,
    )


def _moved_words(j: Judged, c: int, width: int, job: Pending, hist: History) -> tuple[str, ...]:
    """What main's history did that the level leaves out: its provisional newest runs,
    points it measured lately, the runs left out as outliers, a drift."""
    out = []
    fit = j.fit
    offset = fit.level.shape[1] - len(job.runs)
    if fit.k_moved[c] > 0:
        for m, metric in enumerate(CHECKS):
            has = np.isfinite(fit.moved[c, :width, m])
            if not has.any() or not metric.gates:
                continue
            pct = float(np.expm1(np.nanmean(fit.moved[c, :width, m][has])) * 100)
            out.append(
                f"main's newest {int(fit.k_moved[c])} run(s) moved {metric.label} by {pct:+.1f} % "
                f"at {int(has.sum())} of {width} point(s) (provisional: a level needs "
                f"{MIN_LEVEL} runs, so main's level is the one before)"
            )
    if fit.point_n is not None:
        young = j.decision.young  # fewer runs than the config's own, never in pairs
        few = [
            (conc, int(fit.point_n[c, i, 0]))
            for i, conc in enumerate(job.concs[:width])
            if young[c, i, 0] and fit.point_n[c, i, 0] > 0
        ]
        out += [
            f"main measured conc {conc} in {k} run(s) only (added lately): a change there "
            f"is unconfirmed until {MIN_LEVEL} runs of main measure it"
            for conc, k in few
        ]
    left = [
        str(hist.runs[job.runs[p - offset]].get("id", "?"))
        for p in np.nonzero(fit.outlier[c] & ~fit.provisional[c])[0]
        if p >= offset
    ]
    if left:
        out.append(
            f"main's run(s) {', '.join(left)} left out as outlier(s): outside the others' "
            "prediction interval (a flaky node moves a whole run)"
        )
    if fit.shape[c] == LINE:
        for m, metric in enumerate(CHECKS):
            if metric.gates:
                pct = float(np.expm1(fit.slope[c, m]) * 100)
                out.append(
                    f"main drifts {pct:+.2f} % per run in {metric.label}: judged against the "
                    "trend at its newest run"
                )
    return tuple(out)


def throughput_config(job: Pending, j: Judged, hist: History, trimmed: bool = False) -> Config:
    c = job.row
    dec = j.decision
    reg, imp = dec.regressed, dec.improved
    moved = bool(reg.moved[c] or reg.young[c])
    why = MAIN_MOVED if reg.moved[c] else FEW_RUNS if reg.young[c] else None
    why = why or (NEEDS_RUNS if reg.suggested[c] else None)
    newest = hist.points[job.runs[-1]][job.key]
    slot = {conc: i for i, conc in enumerate(job.concs)}
    points = []
    for conc in sorted(set(job.mine) | job.expected):
        rows, main = job.mine.get(conc), newest.get(conc)
        if not rows:
            points.append(Point(conc, MISSING, MISSING, main=main))
            continue
        i = slot[conc]
        if not any(math.isfinite(v) for v in j.lists.center[c][i][:GATING]):
            points.append(Point(conc, NEW, NEW, pr=_shown_row(rows, j, c, i), main=main))
            continue
        checks = tuple(_checks(j, c, i, rows, moved))
        verdict = worst([ch.verdict for ch in checks if ch.verdict != UNKNOWN] or [NOISE])
        if verdict != REGRESSED and any(map(_unreported, checks)):
            verdict = MISSING
        checks = (*checks, _shown(j, c, i, rows))
        points.append(Point(conc, COMPARED, verdict, checks, main, _shown_row(rows, j, c, i)))
    level, curve = _level(j, c, moved), _curve(j, c)
    parts = [
        COVERAGE_LOST if MISSING in (p.status, p.verdict) else p.verdict
        for p in points
        if not (trimmed and p.status == MISSING)
    ]
    parts += [level.verdict] if level is not None else []
    if reg.flagged[c]:
        parts.append(UNCONFIRMED if moved else REGRESSED)
    elif reg.suggested[c]:
        parts.append(UNCONFIRMED)
    if imp.flagged[c] and not imp.moved[c] and not imp.young[c]:
        parts.append(IMPROVED)
    verdict = worst([p for p in parts if p != UNKNOWN])
    if verdict == REGRESSED and moved:
        verdict = UNCONFIRMED
    config_p, better_p = reg.config_p[c], imp.config_p[c]
    return Config(
        key=job.key,
        kind="throughput",
        label=config_label(job.identity),
        identity=job.identity,
        verdict=verdict,
        points=tuple(points),
        curve=curve,
        level=level,
        runs=len(job.runs),
        baseline=hist.runs[job.runs[-1]],
        p_value=_num(config_p),
        p_improved=_num(better_p),
        tests=int(dec.tests[c]),
        alpha=_num(
            reg.cutoff if reg.flagged[c] else dec.base.q / max(int((dec.tests > 0).sum()), 1)
        ),
        why=why if verdict == UNCONFIRMED else None,
        repeats=_repeats(job, j) if why == NEEDS_RUNS and verdict == UNCONFIRMED else None,
        power=_power(j, c, job),
        pr_runs=int(j.power.runs[c]),
        moved=_moved_words(j, c, len(job.concs), job, hist),
    )


def _unreported(check: Check) -> bool:
    """A gated metric main has a level of that this PR's point did not report (left out,
    or 0 where lower is better): the point went unjudged on it, a check lost, never
    within noise (a client that stopped reporting TPOT hid a TPOT regression)."""
    after = check.after
    gone = after is None or (after <= 0 and not check.metric.higher_is_better)
    return check.metric.gates and check.before is not None and gone


def _shown_row(rows: list[Row], j: Judged, c: int, i: int) -> Row:
    """The PR's row as shown: the run's own, or the runs' geometric means."""
    if len(rows) == 1:
        return rows[0]
    out = rows[0].copy()
    metrics = dict(metrics_of(out))
    for key in metrics:
        values = [metrics_of(r).get(key) for r in rows]
        positive = [v for v in values if isinstance(v, int | float) and v > 0]
        if len(positive) == len(values):
            metrics[key] = math.exp(sum(math.log(v) for v in positive) / len(positive))
    out["metrics"] = metrics
    return out


def _power(j: Judged, c: int, job: Pending) -> tuple[MetricPower, ...]:
    out = []
    pw, valid = j.power, j.decision.base.valid
    for m, metric in enumerate(CHECKS):
        if not metric.gates:
            continue
        pts = tuple(
            (conc, float(pw.detectable[c, i, m]))
            for i, conc in enumerate(job.concs)
            if valid[c, i, m]
        )
        if pts:
            out.append(MetricPower(metric, _num(pw.mean_detectable[c, m]), pts))
    return tuple(out)


def _lost_score(conc: int, s: Accuracy) -> Score:
    """An accuracy score main measured and this run did not."""
    value, stderr = s["value"], s.get("stderr")
    return Score(
        conc, s["task"], s["metric"], s["filter"], MISSING, value, stderr, None, None, MISSING
    )


def _repeats(job: Pending, j: Judged) -> Repeats:
    runs_now = int(j.power.runs[job.row])
    need = int(j.power.repeats[job.row])
    rows = [rs[0] for _, rs in sorted(job.mine.items()) if rs]
    if need <= 0:
        return Repeats(0, 0, priced.identity_rows(rows), 0.0, "more runs than infx asks for")
    count = need - runs_now
    hours, source = priced.price(rows, count)
    return Repeats(need, count, priced.identity_rows(rows), hours, source)


def lost_configs(mine: dict[str, dict[int, list[Row]]], hist: History) -> list[Config]:
    """Configs of a family this run measured that main's newest run of that family has
    and this run lacks: publishing this run would drop their curves."""
    families: dict[str, set[str]] = {}
    for key, points in mine.items():
        row = next(iter(points.values()))[0]
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
            ident = config_identity(row["identity"])
            if row["kind"] == "accuracy":
                scores = tuple(
                    _lost_score(c, s)
                    for c, r in sorted(by_conc.items())
                    for s in r.get("accuracy", [])
                )
                lost: tuple[Point, ...] = ()
            else:
                scores = ()
                lost = tuple(Point(c, MISSING, MISSING, main=r) for c, r in sorted(by_conc.items()))
            out.append(
                Config(
                    key=key,
                    kind=row["kind"],
                    label=config_label(row["identity"]),
                    identity=ident,
                    verdict=COVERAGE_LOST,
                    points=lost,
                    scores=scores,
                    runs=len(hist.holding(key)),
                    baseline=hist.runs[newest],
                    only_main=True,
                )
            )
    return out
