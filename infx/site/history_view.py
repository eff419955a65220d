"""A config's page: each metric at each concurrency over main's runs, and every step of it
labelled with the changelog entry that explains it (or "unexplained", or why unknown)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from infx.site.explain import UNKNOWN, explain
from infx.site.model import ConfigHistory, Range, Run
from infx.site.shape import SHOWN, model_name, num, scenario_name, shown_all
from infx.site.steps import ConfigSteps


def step_range(runs: Sequence[Run], before: int, after: int) -> tuple[str, str]:
    """The commit range a step's changelog entries come from."""
    return runs[before].sha, runs[after].sha


def _entry(entry: Any) -> dict[str, Any]:
    return {
        "pr_link": entry.pr_link,
        "description": list(entry.description),
        "keys": list(entry.config_keys),
    }


def config_doc(
    config: ConfigHistory,
    runs: Sequence[Run],
    found: ConfigSteps | None,
    ranges: Mapping[tuple[str, str], Range],
) -> dict[str, Any]:
    """The page's document; values in the units the page shows (ms for latencies)."""
    images: list[str] = []
    series = {}
    for conc in sorted(config.points):
        points = config.points[conc]
        image_ids = []
        for image in points.images:
            if image not in images:
                images.append(image)
            image_ids.append(images.index(image))
        series[str(conc)] = {
            "runs": points.runs,
            "images": image_ids,
            "m": {m: shown_all(m, values) for m, values in points.values.items()},
        }
    steps = []
    for step in found.steps if found else ():
        why = explain(ranges.get(step_range(runs, step.before, step.run)), config.identity)
        steps.append(
            {
                "run": step.run,
                "before": step.before,
                "joint": step.joint,
                "moved": [[m.conc, m.metric, num(m.change_pct, 3)] for m in step.moved],
                "status": why.status,
                "entries": [_entry(e) for e in why.entries],
                "note": why.note,
            }
        )
    landed = {}
    for run in sorted({r for points in config.points.values() for r in points.runs}):
        if run == 0 or (runs[run - 1].sha, runs[run].sha) not in ranges:
            continue
        why = explain(ranges[step_range(runs, run - 1, run)], config.identity)
        if why.entries or why.status == UNKNOWN:
            landed[str(run)] = {"entries": [_entry(e) for e in why.entries], "note": why.note}
    noise = {
        str(conc): {"band": num(n.band_pct, 3), "sigma": num(n.sigma_pct, 3), "assumed": n.assumed}
        for conc, n in (found.noise.items() if found else ())
    }
    return {
        "slug": config.slug,
        "label": config.label,
        "kind": config.kind,
        "identity": config.identity,
        "page": [model_name(config.identity), scenario_name(config.identity)],
        "metrics": [
            {"key": key, "label": info.label, "unit": info.unit} for key, info in SHOWN.items()
        ]
        if config.kind == "throughput"
        else [],
        "images": images,
        "series": series,
        "steps": steps,
        "landed": landed,  # run -> the changelog entries naming this config that landed with it
        "noise": noise,
        "outliers": list(found.outliers) if found else [],
        "drift": [[metric, num(pct, 3)] for metric, pct in found.drift] if found else [],
    }
