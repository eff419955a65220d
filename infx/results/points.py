"""The per-point test and the config roll-up: each check of a point against main's level and
band, a point's verdict from its checks, a config's from its points, curves and accuracy
scores, and the configs of a family main measured that this run lacks."""

from __future__ import annotations

import math
from dataclasses import replace
from typing import Any

from infx.results import noise
from infx.results.compare import (
    CHECKS,
    COMPARED,
    COVERAGE_LOST,
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
    interactivity,
    judge_score,
)
from infx.results.report import Check, Config, Curve, Point, Score, score_verdict, worst
from infx.results.series import History, Pending, measured

_EDGE = 1e-9  # percent: a change on the band's edge (give or take float error) is noise


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


def throughput_config(
    job: Pending,
    levels: list[noise.Level],
    hist: History,
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
                measured(pr, c.key),
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


def _stderr(score: dict[str, Any]) -> float | None:
    """The score's standard error; without one (lm-eval's "N/A"), the binomial error of a
    rate over its samples, so a drop is never 'n/a' merely for want of a stderr."""
    stderr: float | None = score.get("stderr")
    if stderr is not None:
        return stderr
    value, samples = score.get("value"), score.get("samples")
    if (
        isinstance(value, int | float)
        and 0 <= value <= 1
        and isinstance(samples, int)
        and samples > 0
    ):
        return math.sqrt(value * (1 - value) / samples)
    return None


def accuracy_config(
    key: str,
    ident: dict[str, Any],
    points: dict[int, dict[str, Any]],
    hist: History,
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
    parts = [score_verdict(s) for s in scores]
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


def lost_configs(mine: dict[str, dict[int, dict[str, Any]]], hist: History) -> list[Config]:
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
