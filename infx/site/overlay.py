"""A PR's overlay: its run over main's curves, with the verdict of every point exactly as
`infx results compare` judges it (the same function, the same history), so a reviewer
sees on the chart what the comment says."""

from __future__ import annotations

from collections.abc import Collection
from typing import Any

from infx.results.table.metrics import interactivity
from infx.results.verdict.document import to_json
from infx.results.verdict.judge import compare
from infx.site.model import PrResults
from infx.site.read import slug
from infx.site.shape import num


def _xy(row: dict[str, Any] | None) -> list[float | None] | None:
    if row is None:
        return None
    metrics = row.get("metrics") or {}
    x, y = interactivity(metrics), metrics.get("tput_per_gpu")
    return [num(x), num(y)] if x is not None and y is not None else None


def _check(check: Any) -> dict[str, Any]:
    scale = check.metric.scale
    return {
        "metric": check.metric.key,
        "label": check.metric.label,
        "unit": check.metric.unit,
        "before": num(check.before * scale) if check.before is not None else None,
        "after": num(check.after * scale) if check.after is not None else None,
        "change": num(check.change_pct, 3),
        "band": num(check.band_pct, 3),
        "verdict": check.verdict,
    }


def _point(point: Any) -> dict[str, Any]:
    checks = list(point.checks)
    main = _xy(point.main)
    band = None
    if checks:
        tput, intvty = checks[0], checks[-1]
        if tput.before is not None and intvty.before is not None:
            main = [num(intvty.before), num(tput.before)]  # main's level, as judged
        band = num(tput.band_pct, 3)
    return {
        "conc": point.conc,
        "status": point.status,
        "verdict": point.verdict,
        "main": main,
        "pr": _xy(point.pr),
        "band": band,
        "change": num(checks[0].change_pct, 3) if checks else None,
        "checks": [_check(c) for c in checks],
    }


def _measure(curve: Any) -> dict[str, Any] | None:
    if curve is None:
        return None
    return {
        "change": num(curve.change_pct, 3),
        "band": num(curve.band_pct, 3),
        "verdict": curve.verdict,
        "matched": curve.matched,
    }


def overlay_doc(pr: PrResults, known: Collection[str], threshold: float) -> dict[str, Any]:
    """The overlay page of one PR run; `known` holds the history's config slugs (links)."""
    report = compare(pr.table.get("rows", []), pr.history, threshold)
    verdict = to_json(report)
    configs = []
    for config in report.configs:
        own = slug(config.kind, config.key.split("|", 1)[1])
        frontier = [[num(x), num(y)] for x, y in config.curve.frontier] if config.curve else []
        configs.append(
            {
                "slug": own if own in known else None,
                "label": config.label,
                "kind": config.kind,
                "verdict": config.verdict,
                "only_main": config.only_main,
                "history_runs": config.runs,
                "curve": _measure(config.curve),
                "level": _measure(config.level),
                "frontier": frontier,
                "points": [_point(p) for p in config.points],
                "scores": [
                    {
                        "conc": s.conc,
                        "task": s.task,
                        "metric": s.metric,
                        "filter": s.filter,
                        "before": num(s.before),
                        "after": num(s.after),
                        "verdict": s.verdict if s.status == "compared" else s.status,
                    }
                    for s in config.scores
                ],
            }
        )
    run = pr.table.get("run") or {}
    return {
        "pr": pr.number,
        "file": pr.name,
        "run": {k: run.get(k) for k in ("id", "attempt", "sha", "ref", "url") if k in run},
        "verdict": verdict["verdict"],
        "gate": verdict["gate"],
        "points": verdict["points"],
        "history_runs": report.runs,
        "threshold": threshold,
        "notes": verdict["notes"],
        "configs": configs,
    }
