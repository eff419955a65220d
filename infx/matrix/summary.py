"""A Markdown table of what a plan will run, for humans and GITHUB_STEP_SUMMARY."""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any

from infx.matrix.expand import AGENTIC, FIXED
from infx.matrix.load import MasterConfigs
from infx.matrix.plan import EVAL_BUCKETS, Plan

_IDENTITY = ("image", "model", "model-prefix", "precision", "framework", "runner")


@dataclass
class Line:
    config: str
    runner: str
    scenario: str
    throughput: int = 0
    evals: int = 0
    concurrencies: set[int] = field(default_factory=set)


def _rows(plan: dict[str, Any]) -> Iterator[tuple[dict[str, Any], bool]]:
    for shape in ("single_node", "multi_node"):
        for rows in plan.get(shape, {}).values():
            for row in rows:
                yield row, False
    for name in EVAL_BUCKETS:
        for row in plan.get(name, []):
            yield row, True


def _concs(values: set[int], limit: int = 12) -> str:
    ordered = sorted(values)
    shown = ", ".join(map(str, ordered[:limit]))
    return shown + (f", … ({len(ordered)} in all)" if len(ordered) > limit else "")


def summary_lines(plan: Plan, masters: MasterConfigs) -> list[Line]:
    """One line per selected config and scenario, rows attributed by the config's identity."""
    owner: dict[tuple[Any, ...], str] = {}
    for key in plan.selected:
        config = masters.config(key)
        owner.setdefault(tuple(config.get(f) for f in _IDENTITY), key)
    lines: dict[tuple[str, str], Line] = {}
    for row, is_eval in _rows(plan.as_json()):
        key = owner.get(tuple(row.get(f) for f in _IDENTITY), row.get("model-prefix", "?"))
        scenario = AGENTIC if row.get("scenario-type") == AGENTIC else FIXED
        line = lines.setdefault((key, scenario), Line(key, row["runner"], scenario))
        if is_eval:
            line.evals += 1
        else:
            line.throughput += 1
        conc = row["conc"]
        line.concurrencies.update(conc if isinstance(conc, list) else [conc])
    return list(lines.values())


def summary_table(plan: Plan, masters: MasterConfigs) -> str:
    lines = summary_lines(plan, masters)
    if not lines:
        return "Nothing to run: no added changelog entry selects a benchmark point."
    out = [
        "| config | runner | scenario | throughput jobs | eval jobs | concurrencies |",
        "| --- | --- | --- | ---: | ---: | --- |",
    ]
    for line in lines:
        out.append(
            f"| {line.config} | {line.runner} | {line.scenario} | {line.throughput} "
            f"| {line.evals} | {_concs(line.concurrencies)} |"
        )
    total = sum(line.throughput + line.evals for line in lines)
    out.append(f"\n{total} job(s) across {len({line.config for line in lines})} config(s).")
    return "\n".join(out)
