"""A comparison's verdict as JSON, as schemas/results-verdict.schema.json describes it
(`infx results compare --format json`)."""

from __future__ import annotations

from typing import Any

from infx.results.noise import model, pool
from infx.results.table.metrics import CHECKS
from infx.results.table.rows import Metrics, Row, metrics_of
from infx.results.verdict import decide, power
from infx.results.verdict.report import FORMAT, SEVERITY, Check, Config, Curve, Repeats, Report
from infx.results.verdict.words import (
    ACCURACY_TOLERANCE,
    IMPROVED,
    MISSING,
    NEW,
    NOISE,
    REGRESSED,
    UNCONFIRMED,
)


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
        "p_value": check.p_value,
        "detectable_pct": check.detectable_pct,
        "moved_pct": check.moved_pct,
        "moved_runs": check.moved_runs,
        "runs": check.runs,
        "advisory": check.advisory,
        "beyond_band": check.beyond,
    }


def _metrics(row: Row | None) -> Metrics | None:
    if row is None:
        return None
    metrics = metrics_of(row)
    keys = [c.key for c in CHECKS] + ["median_intvty", "mean_intvty"]
    return {k: metrics[k] for k in keys if k in metrics}


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
        "p_value": curve.p_value,
        "detectable_pct": curve.detectable_pct,
        "why": curve.why,
        "advisory": curve.advisory,
    }


def _repeats_json(found: Repeats | None) -> dict[str, Any] | None:
    if found is None:
        return None
    return {
        "runs": found.runs,
        "count": found.count,
        "rows": list(found.rows),
        "gpu_hours": round(found.gpu_hours, 3),
        "source": found.source,
    }


def _config_json(c: Config) -> dict[str, Any]:
    return {
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
                "rule": s.rule,
            }
            for s in c.scores
        ],
        "curve": _curve_json(c.curve),
        "equal_concurrency": _curve_json(c.level),
        "p_value": c.p_value,
        "p_improved": c.p_improved,
        "tests": c.tests,
        "alpha": c.alpha,
        "why": c.why,
        "repeats": _repeats_json(c.repeats),
        "power": [
            {
                "metric": pw.metric.key,
                "config_pct": pw.config_pct,
                "points": [{"conc": conc, "detectable_pct": pct} for conc, pct in pw.points],
            }
            for pw in c.power
        ],
        "pr_runs": c.pr_runs,
        "moved": list(c.moved),
        "loo": None if c.loo is None else {"judged": c.loo[0], "failed": c.loo[1]},
    }


def repeats_section(report: Report) -> dict[str, Any]:
    """Every unconfirmed config's runs to dispatch: rows with their counts, GPU-hours; and
    the pairs this verdict judged (runs of main's image beside this PR's, and the configs
    judged on them; 0 and 0 without)."""
    rows: list[dict[str, Any]] = []
    hours = 0.0
    for config in report.configs:
        found = config.repeats
        if found is None or found.count <= 0:
            continue
        rows += [{**row, "count": found.count} for row in found.rows]
        hours += found.gpu_hours
    return {
        "rows": rows,
        "count": sum(r["count"] for r in rows),
        "gpu_hours": round(hours, 3),
        "pairs": {"runs": report.pairs, "configs": report.paired_configs},
    }


def to_json(report: Report) -> dict[str, Any]:
    """The verdict as schemas/results-verdict.schema.json describes it."""
    counts = {v: report.points(v) for v in (IMPROVED, REGRESSED, UNCONFIRMED, NOISE, NEW, MISSING)}
    ack = None
    if report.ack is not None:
        ack = {"by": report.ack.by, "who": report.ack.who, "url": report.ack.url}
    out: dict[str, Any] = {
        "format": FORMAT,
        "verdict": report.verdict,
        "gate": {"passed": report.passed, "failing": report.failing, "acknowledged": ack},
        "points": counts,
        "configs_by_verdict": {v: report.configs_with(v) for v in SEVERITY},
        "method": {
            "threshold_pct": report.threshold,
            "alpha": report.q,
            "min_history": model.MIN_LEVEL,
            "default_noise_pct": model.DEFAULT_NOISE * 100,
            "history_runs": report.runs,
            "checks": [c.key for c in CHECKS if c.gates],
            "advisory": [c.key for c in CHECKS if not c.gates],
            "q_configs": report.q if report.q_configs is None else report.q_configs,
            "alpha_held": report.q if report.q_held is None else report.q_held,
            "suggest": min(1.0, decide.SUGGEST * report.q),
            "power": power.POWER,
            "pr_runs": report.pr_runs,
            "accuracy_tolerance": ACCURACY_TOLERANCE,
            "share": decide.SHARE,
            "outlier_alpha": model.OUTLIER_ALPHA,
            "step_alpha": model.STEP_ALPHA,
            "drift_alpha": model.DRIFT_ALPHA,
            "huber": pool.HUBER,
            "tail_df": decide.TAIL_DF,
        },
        "calibration": None
        if report.calibration is None
        else {"judged": report.calibration[0], "failed": report.calibration[1]},
        "notes": list(report.notes),
        "configs": [_config_json(c) for c in report.configs],
        "repeats": repeats_section(report),
    }
    if report.sweep:
        out["sweep"] = {
            "verdict": report.sweep_verdict,
            "shifts": [
                {
                    "metric": s.metric.key,
                    "change_pct": s.change_pct,
                    "band_pct": s.band_pct,
                    "verdict": s.verdict,
                }
                for s in report.sweep
            ],
        }
    return out
