"""A PR's overlay: its run over main's curves, with the verdict of every point exactly as
`infx results compare` judged it, so a reviewer sees on the chart what the comment says.

One shape for both sources: a verdict document (`results compare --format json`, as the
history's verdicts table keeps it for every judged PR run) becomes the page; a results
table given to the build (`--pr-results`) is judged first, by the same function against
the same history, and its document shaped the same way."""

from __future__ import annotations

from collections.abc import Collection, Mapping
from typing import Any

from infx.results.table.metrics import CHECKS, INTERACTIVITY, INTERACTIVITY_METRIC, Metric
from infx.results.verdict.curves import frontier
from infx.site.model import PrResults, VerdictRecord
from infx.site.read import slug
from infx.site.shape import num

_METRICS = {m.key: m for m in (*CHECKS, INTERACTIVITY_METRIC)}
_TPUT = "tput_per_gpu"


def _xy(metrics: Mapping[str, Any] | None) -> list[float | None] | None:
    if not metrics:
        return None
    x = next((metrics[k] for k in INTERACTIVITY if metrics.get(k) is not None), None)
    y = metrics.get(_TPUT)
    return [num(x), num(y)] if x is not None and y is not None else None


def _scaled(value: Any, metric: Metric) -> float | None:
    return num(value * metric.scale) if isinstance(value, int | float) else None


def _check(check: Mapping[str, Any]) -> dict[str, Any]:
    key = str(check.get("metric"))
    metric = _METRICS.get(key, Metric(key, key, "", True))
    return {
        "metric": key,
        "label": metric.label,
        "unit": metric.unit,
        "before": _scaled(check.get("before"), metric),
        "after": _scaled(check.get("after"), metric),
        "change": num(check.get("change_pct"), 3),
        "band": num(check.get("band_pct"), 3),
        "verdict": check.get("verdict"),
    }


def _point(point: Mapping[str, Any]) -> dict[str, Any]:
    checks = {c.get("metric"): c for c in point.get("checks") or []}
    main = _xy(point.get("main"))
    tput, intvty = checks.get(_TPUT), checks.get(INTERACTIVITY_METRIC.key)
    if tput and intvty and tput.get("before") is not None and intvty.get("before") is not None:
        main = [num(intvty["before"]), num(tput["before"])]  # main's level, as judged
    return {
        "conc": point.get("conc"),
        "status": point.get("status"),
        "verdict": point.get("verdict"),
        "main": main,
        "pr": _xy(point.get("pr")),
        "band": num(tput.get("band_pct"), 3) if tput else None,
        "change": num(tput.get("change_pct"), 3) if tput else None,
        "checks": [_check(c) for c in point.get("checks") or []],
    }


def _measure(curve: Mapping[str, Any] | None) -> dict[str, Any] | None:
    if not curve:
        return None
    return {
        "change": num(curve.get("change_pct"), 3),
        "band": num(curve.get("band_pct"), 3),
        "verdict": curve.get("verdict"),
        "matched": curve.get("matched"),
    }


def _config(config: Mapping[str, Any], known: Collection[str]) -> dict[str, Any]:
    key = str(config.get("key", ""))
    own = slug(str(config.get("kind")), key.split("|", 1)[-1])
    points = [_point(p) for p in config.get("points") or []]
    levels = [(p["main"][0], p["main"][1]) for p in points if p["main"] and None not in p["main"]]
    swept = any(p["pr"] is not None for p in points) or any(
        s.get("after") is not None for s in config.get("scores") or []
    )
    return {
        "slug": own if own in known else None,
        "label": config.get("label"),
        "kind": config.get("kind"),
        "identity": config.get("identity") or {},
        "verdict": config.get("verdict"),
        "only_main": bool(config.get("only_main")),
        "swept": swept,
        "history_runs": config.get("history_runs"),
        "curve": _measure(config.get("curve")),
        "level": _measure(config.get("equal_concurrency")),
        "frontier": [[num(x), num(y)] for x, y in frontier(levels)],
        "points": points,
        "scores": [
            {
                "conc": s.get("conc"),
                "task": s.get("task"),
                "metric": s.get("metric"),
                "filter": s.get("filter"),
                "before": num(s.get("before")),
                "after": num(s.get("after")),
                "verdict": s.get("verdict") if s.get("status") == "compared" else s.get("status"),
            }
            for s in config.get("scores") or []
        ],
    }


def verdict_overlay(
    pr: int, name: str, run: Mapping[str, Any], verdict: Mapping[str, Any], known: Collection[str]
) -> dict[str, Any]:
    """The overlay page of one judged PR run from its verdict document; `known` holds the
    history's config slugs (links to their pages)."""
    method = verdict.get("method") or {}
    return {
        "pr": pr,
        "file": name,
        "run": {k: run[k] for k in ("id", "attempt", "sha", "ref", "url") if run.get(k)},
        "verdict": verdict.get("verdict"),
        "gate": verdict.get("gate") or {},
        "points": verdict.get("points") or {},
        "history_runs": method.get("history_runs"),
        "threshold": method.get("threshold_pct"),
        "notes": list(verdict.get("notes") or []),
        "configs": [_config(c, known) for c in verdict.get("configs") or []],
    }


def overlay_doc(pr: PrResults, known: Collection[str], threshold: float) -> dict[str, Any]:
    """The overlay page of a PR's results table (`--pr-results`), judged here by
    `infx results compare`'s own function against the same history."""
    from infx.results.verdict.document import to_json
    from infx.results.verdict.judge import compare

    report = compare(pr.table.get("rows", []), pr.history, threshold)
    return verdict_overlay(pr.number, pr.name, pr.table.get("run") or {}, to_json(report), known)


def record_overlay(record: VerdictRecord, known: Collection[str]) -> dict[str, Any]:
    """The overlay page of a recorded verdict (the history's verdicts table, `--verdicts`)."""
    run = {"id": record.run_id, "attempt": record.attempt, "sha": record.head_sha}
    return verdict_overlay(record.pr, record.name, run, record.doc, known)


def newest_per_pr(records: Collection[VerdictRecord]) -> list[VerdictRecord]:
    """Each PR's newest judged run attempt: what its comment says now."""
    newest: dict[int, VerdictRecord] = {}
    for record in records:
        held = newest.get(record.pr)
        order = (record.run_id or 0, record.attempt, record.name)
        if held is None or order > (held.run_id or 0, held.attempt, held.name):
            newest[record.pr] = record
    return [newest[pr] for pr in sorted(newest)]
