"""The Pareto pages: per model and scenario (isl/osl), throughput per GPU against
interactivity, one curve per hardware/framework/precision family (its parallelisms
together), each config at its latest main run, with each point's noise band."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from infx.results.table.keys import family_key
from infx.site.model import ConfigHistory
from infx.site.shape import model_name, num, parallelism, scenario_name, shown
from infx.site.steps import ConfigSteps


@dataclass(frozen=True)
class Page:
    model: str
    scenario: str
    title: str
    doc: dict[str, Any]

    @property
    def route(self) -> str:
        return f"{self.model}/{self.scenario}"


def frontier(points: Sequence[tuple[float, float]]) -> list[tuple[float, float]]:
    """The points no other point beats on both axes (interactivity, throughput), by rising
    interactivity."""
    best: list[tuple[float, float]] = []
    for point in sorted(points, key=lambda p: (-p[0], -p[1])):
        if not best or point[1] > best[-1][1]:
            best.append(point)
    return sorted(best)


def curve_label(identity: Mapping[str, Any]) -> str:
    """`h200 · vllm · bf16` plus what else sets the family apart."""
    parts = [str(identity.get(k, "?")) for k in ("hardware", "framework", "precision")]
    spec = identity.get("spec-decoding", "none")
    if spec != "none":
        parts.append(str(spec))
    if identity.get("multinode"):
        parts.append("multi-node")
    if identity.get("disagg"):
        parts.append("disagg")
    kv = identity.get("kv-offloading")
    if kv and kv != "none":
        parts.append(f"kv {kv}")
    for key in ("router", "kv-p2p-transfer"):
        if key in identity:
            parts.append(f"{key} {identity[key]}")
    if identity.get("runner") != identity.get("hardware"):
        parts.append(f"on {identity.get('runner')}")
    return " · ".join(parts)


def _points(config: ConfigHistory, found: ConfigSteps | None) -> list[dict[str, Any]]:
    latest = max(config.runs)
    out = []
    for conc in sorted(config.points):
        series = config.points[conc]
        if latest not in series.runs:
            continue
        at = series.runs.index(latest)
        values = {m: v[at] for m, v in series.values.items()}
        x, y = values.get("intvty"), values.get("tput_per_gpu")
        if x is None or y is None:
            continue
        noise = found.noise.get(conc) if found else None
        out.append(
            {
                "c": config.slug,
                "conc": conc,
                "x": num(x),
                "y": num(y),
                "band": num(noise.band_pct, 3) if noise else None,
                "sigma": num(noise.sigma_pct, 3) if noise else None,
                "assumed": bool(noise and noise.assumed),
                "run": latest,
                "image": series.images[at],
                "ttft": shown("median_ttft", values.get("median_ttft")),
                "tpot": shown("median_tpot", values.get("median_tpot")),
                "par": parallelism(config.identity),
            }
        )
    return out


def pages(configs: Sequence[ConfigHistory], steps: Mapping[str, ConfigSteps]) -> list[Page]:
    """One page per (model, scenario) holding a throughput config with a point."""
    grouped: dict[tuple[str, str], dict[str, list[ConfigHistory]]] = {}
    for config in configs:
        if config.kind != "throughput" or not config.points:
            continue
        page = (model_name(config.identity), scenario_name(config.identity))
        family = family_key(config.kind, config.identity)
        grouped.setdefault(page, {}).setdefault(family, []).append(config)
    out = []
    for (model, scenario), families in sorted(grouped.items()):
        curves = []
        for members in families.values():
            points = [p for c in members for p in _points(c, steps.get(c.slug))]
            if not points:
                continue
            edge = frontier([(p["x"], p["y"]) for p in points])
            on_edge = set(edge)
            for p in points:
                p["front"] = (p["x"], p["y"]) in on_edge
            curves.append(
                {
                    "label": curve_label(members[0].identity),
                    "configs": [
                        {"slug": c.slug, "label": c.label, "par": parallelism(c.identity)}
                        for c in members
                    ],
                    "points": points,
                    "frontier": [list(p) for p in edge],
                }
            )
        if not curves:
            continue
        curves.sort(key=lambda c: str(c["label"]))
        _unique_labels(curves)
        first = families[next(iter(families))][0].identity
        title = f"{first.get('model-prefix', model)} · {_scenario_title(first)}"
        doc = {"model": model, "scenario": scenario, "title": title, "curves": curves}
        out.append(Page(model, scenario, title, doc))
    return out


def _scenario_title(identity: Mapping[str, Any]) -> str:
    if identity.get("scenario") == "fixed-seq-len":
        return f"ISL {identity.get('isl')} / OSL {identity.get('osl')}"
    return str(identity.get("scenario"))


def _unique_labels(curves: list[dict[str, Any]]) -> None:
    seen: dict[str, int] = {}
    for curve in curves:
        count = seen.get(curve["label"], 0) + 1
        seen[curve["label"]] = count
        if count > 1:
            curve["label"] += f" ({count})"
