"""A comparison's verdict as JSON, as schemas/results-verdict.schema.json describes it
(`infx results compare --format json`)."""

from __future__ import annotations

from typing import Any

from infx.results import noise
from infx.results.compare import CHECKS, IMPROVED, MISSING, NEW, NOISE, REGRESSED
from infx.results.report import FORMAT, SEVERITY, Check, Curve, Report


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
