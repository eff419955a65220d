"""A Markdown table a maintainer can approve a multi-hour sweep from.

One line per config, scenario and parallelism: runner, image, throughput jobs against
eval jobs, concurrencies, and the GPU-hours it will hold (duration x GPUs per job),
with totals. Agentic rows carry their duration; a fixed-seq-len or eval point is
estimated at MINUTES_PER_POINT, stated under the table.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any

from infx.matrix.contract import row_gpus
from infx.matrix.expand import AGENTIC, FIXED, is_agentic, is_multinode, row_concs
from infx.matrix.load import MasterConfigs
from infx.matrix.plan import EVAL_BUCKETS, Plan

_IDENTITY = ("image", "model", "model-prefix", "precision", "framework", "runner")
# A fixed-seq-len point (server start, warm-up, one client run): a planning estimate.
MINUTES_PER_POINT = 15


@dataclass
class Line:
    config: str
    runner: str
    image: str
    parallelism: str
    scenario: str
    throughput: int = 0
    evals: int = 0
    concurrencies: set[int] = field(default_factory=set)
    gpu_hours: float = 0.0


def _rows(plan: dict[str, Any]) -> Iterator[tuple[dict[str, Any], bool]]:
    for shape in ("single_node", "multi_node"):
        for rows in plan.get(shape, {}).values():
            for row in rows:
                yield row, False
    for name in EVAL_BUCKETS:
        for row in plan.get(name, []):
            yield row, True


def _worker(block: dict[str, Any]) -> str:
    text = f"{block['num-worker']}x tp{block['tp']}"
    if block.get("ep", 1) != 1:
        text += f" ep{block['ep']}"
    return text + (" dp-attn" if block.get("dp-attn") else "")


def parallelism(row: dict[str, Any]) -> str:
    if is_multinode(row):
        return f"P {_worker(row['prefill'])} / D {_worker(row['decode'])}"
    text = f"tp{row['tp']}"
    if row.get("ep", 1) != 1:
        text += f" ep{row['ep']}"
    return text + (" dp-attn" if row.get("dp-attn") else "")


def gpu_hours(row: dict[str, Any], minutes_per_point: float = MINUTES_PER_POINT) -> float:
    """Estimated GPU-hours one job holds its GPUs for."""
    points = len(row_concs(row))
    if is_multinode(row) and row.get("run-eval") and not row.get("eval-all-concs"):
        points = 1
    hours = row["duration"] / 3600 if "duration" in row else minutes_per_point * points / 60
    return hours * row_gpus(row)["total"]


def summary_lines(plan: Plan, masters: MasterConfigs) -> list[Line]:
    """Lines in plan order, rows attributed to a selected config by their identity fields."""
    owner: dict[tuple[Any, ...], str] = {}
    for key in plan.selected:
        config = masters.config(key)
        owner.setdefault(tuple(config.get(f) for f in _IDENTITY), key)
    lines: dict[tuple[str, str, str], Line] = {}
    for row, is_eval in _rows(plan.as_json()):
        key = owner.get(tuple(row.get(f) for f in _IDENTITY), row.get("model-prefix", "?"))
        scenario = AGENTIC if is_agentic(row) else FIXED
        shape = parallelism(row)
        line = lines.setdefault(
            (key, scenario, shape), Line(key, row["runner"], row["image"], shape, scenario)
        )
        if is_eval:
            line.evals += 1
        else:
            line.throughput += 1
        line.concurrencies.update(row_concs(row))
        line.gpu_hours += gpu_hours(row)
    return list(lines.values())


def _shown(values: set[int], limit: int = 10) -> str:
    ordered = sorted(values)
    text = ", ".join(map(str, ordered[:limit]))
    return text + (f", … ({len(ordered)} in all)" if len(ordered) > limit else "")


def _cell(text: str) -> str:
    return text.replace("|", "\\|")


def summary_table(plan: Plan, masters: MasterConfigs) -> str:
    lines = summary_lines(plan, masters)
    if not lines:
        return "Nothing to run: no added changelog entry selects a benchmark point."
    out = [
        "| config | runner | image | parallelism | scenario | throughput jobs | eval jobs "
        "| concurrencies | GPU-hours |",
        "| --- | --- | --- | --- | --- | ---: | ---: | --- | ---: |",
    ]
    for line in lines:
        out.append(
            f"| {_cell(line.config)} | {_cell(line.runner)} | `{_cell(line.image)}` "
            f"| {line.parallelism} | {line.scenario} | {line.throughput} | {line.evals} "
            f"| {_shown(line.concurrencies)} | {line.gpu_hours:.1f} |"
        )
    jobs = sum(line.throughput for line in lines)
    evals = sum(line.evals for line in lines)
    hours = sum(line.gpu_hours for line in lines)
    configs = len({line.config for line in lines})
    out.append(
        f"| **total** | | | | | **{jobs}** | **{evals}** | | **{hours:.1f}** |\n\n"
        f"{jobs + evals} job(s) across {configs} config(s), about {hours:.0f} GPU-hours. "
        f"Agentic jobs hold their GPUs for their `duration`; a fixed-seq-len or eval point "
        f"is estimated at {MINUTES_PER_POINT} minutes."
    )
    return "\n".join(out)
