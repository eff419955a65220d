"""A Markdown table a maintainer can approve a multi-hour sweep from.

One line per config, scenario and parallelism: why it runs (the changelog entry that
selected the config: its key and description), runner, image, throughput jobs against
eval jobs, concurrencies, and the GPU-hours it will hold (whole nodes; what its servers
use beside it where that differs), with where each estimate came from (recorded durations
of jobs of the same identity, or the assumptions of `infx.matrix.cost`), then totals, the
wall time per runner pool and the budget verdict.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from infx.changelog.check import resolve_keys
from infx.markdown import Align, Md, bold, code, table, text
from infx.matrix.cost import MINUTES_PER_POINT, BudgetVerdict, JobCost, estimate
from infx.matrix.expand import AGENTIC, FIXED, is_agentic, row_concs
from infx.matrix.load import MasterConfigs
from infx.matrix.plan import Plan
from infx.matrix.rows import MatrixRow, PlanEntry, Worker, jobs_of

_IDENTITY = ("image", "model", "model-prefix", "precision", "framework", "runner")
_HEADERS = (
    "config",
    "why",
    "runner",
    "image",
    "parallelism",
    "scenario",
    "throughput jobs",
    "eval jobs",
    "concurrencies",
    "GPU-hours",
    "estimate",
)
_ALIGN: tuple[Align, ...] = (*("left",) * 6, "right", "right", "left", "right", "left")
_WHY_CHARS = 70


@dataclass
class Line:
    config: str
    runner: str
    image: str
    parallelism: str
    scenario: str
    throughput: int = 0
    evals: int = 0
    why: Md = field(default_factory=Md)
    concurrencies: set[int] = field(default_factory=set)
    gpu_hours: float = 0.0  # held
    used_hours: float = 0.0  # what the servers use
    recorded: int = 0  # jobs estimated from recorded durations
    assumed: int = 0

    @property
    def source(self) -> str:
        if not self.recorded:
            return "assumed"
        if not self.assumed:
            return "recorded"
        return f"{self.recorded} recorded, {self.assumed} assumed"


def _worker(block: Worker) -> str:
    text = f"{block['num-worker']}x tp{block['tp']}"
    if block.get("ep", 1) != 1:
        text += f" ep{block['ep']}"
    return text + (" dp-attn" if block.get("dp-attn") else "")


def parallelism(row: MatrixRow) -> str:
    if "prefill" in row and "decode" in row:
        return f"P {_worker(row['prefill'])} / D {_worker(row['decode'])}"
    text = f"tp{row['tp']}"
    if row.get("ep", 1) != 1:
        text += f" ep{row['ep']}"
    return text + (" dp-attn" if row.get("dp-attn") else "")


def _first_line(entry: PlanEntry) -> str:
    description = entry.get("description") or [""]
    text = " ".join(str(description[0]).split())
    return text if len(text) <= _WHY_CHARS else text[: _WHY_CHARS - 1] + "…"


def reasons(plan: Plan, keys: list[str]) -> dict[str, Md]:
    """Config key -> the changelog entries that selected it: the matching pattern (a code
    span) and the first line of the description (escaped), entries in changelog order."""
    found: dict[str, list[Md]] = {}
    for entry in plan.as_json()["changelog_metadata"]["entries"]:
        for pattern in entry.get("config-keys") or []:
            for key in resolve_keys(pattern, keys):
                first = _first_line(entry)
                why = Md(f"{code(pattern)}: {text(first)}" if first else code(pattern))
                if why not in found.setdefault(key, []):
                    found[key].append(why)
    return {key: _listed(whys) for key, whys in found.items()}


def _listed(whys: list[Md], limit: int = 2) -> Md:
    """The newest entries first; the rest counted."""
    newest = whys[::-1]
    shown = "; ".join(newest[:limit])
    return Md(
        shown + (f" (and {len(newest) - limit} earlier entries)" if len(newest) > limit else "")
    )


def summary_lines(
    plan: Plan, masters: MasterConfigs, costs: list[JobCost] | None = None
) -> list[Line]:
    """Lines in plan order, rows attributed to a selected config by their identity fields.
    `costs` are the plan's jobs in `plan_rows` order (default: assumed durations)."""
    owner: dict[tuple[Any, ...], str] = {}
    for key in plan.selected:
        config = masters.config(key)
        owner.setdefault(tuple(config.get(f) for f in _IDENTITY), key)
    why = reasons(plan, masters.keys()) if plan.selected else {}
    jobs = jobs_of(plan.as_json())
    costs = costs if costs is not None else estimate(jobs)
    lines: dict[tuple[str, str, str], Line] = {}
    for (row, is_eval), cost in zip(jobs, costs, strict=True):
        key = owner.get(tuple(row.get(f) for f in _IDENTITY), row.get("model-prefix", "?"))
        scenario = AGENTIC if is_agentic(row) else FIXED
        shape = parallelism(row)
        line = lines.setdefault(
            (key, scenario, shape),
            Line(key, row["runner"], row["image"], shape, scenario, why=why.get(key, Md(""))),
        )
        if is_eval:
            line.evals += 1
        else:
            line.throughput += 1
        line.concurrencies.update(row_concs(row))
        line.gpu_hours += cost.held_hours
        line.used_hours += cost.gpu_hours
        if cost.recorded:
            line.recorded += 1
        else:
            line.assumed += 1
    return list(lines.values())


def _shown(values: set[int], limit: int = 10) -> str:
    ordered = sorted(values)
    shown = ", ".join(map(str, ordered[:limit]))
    return shown + (f", … ({len(ordered)} in all)" if len(ordered) > limit else "")


def _hours(minutes: float) -> str:
    return f"{minutes / 60:.1f} h"


def _gpu_hours(held: float, used: float) -> str:
    """Held GPU-hours, and what the servers use where that differs."""
    if round(held, 1) == round(used, 1):
        return f"{held:.1f}"
    return f"{held:.1f} ({used:.1f} used)"


def summary_table(
    plan: Plan,
    masters: MasterConfigs,
    costs: list[JobCost] | None = None,
    wall: dict[str, float] | None = None,
    budget: BudgetVerdict | None = None,
    note: str = "",
) -> str:
    """The plan as a Markdown table per config, its totals, and `note` (the format in force
    and why) below them."""
    lines = summary_lines(plan, masters, costs)
    if not lines:
        return "Nothing to run: no added changelog entry selects a benchmark point."
    rows: list[list[object]] = [
        [
            line.config,
            line.why,
            line.runner,
            code(line.image),
            line.parallelism,
            line.scenario,
            line.throughput,
            line.evals,
            _shown(line.concurrencies),
            _gpu_hours(line.gpu_hours, line.used_hours),
            line.source,
        ]
        for line in lines
    ]
    jobs = sum(line.throughput for line in lines)
    evals = sum(line.evals for line in lines)
    hours = sum(line.gpu_hours for line in lines)
    used = sum(line.used_hours for line in lines)
    configs = len({line.config for line in lines})
    total = bold(_gpu_hours(hours, used))
    rows.append([bold("total"), *[""] * 5, bold(jobs), bold(evals), "", total, ""])
    out = [table(_HEADERS, rows, _ALIGN)]
    sentence = f"{jobs + evals} job(s) across {configs} config(s), about {hours:.0f} GPU-hours"
    if round(used) != round(hours):
        sentence += f" held as whole nodes ({used:.0f} used by the servers)"
    if wall:
        slowest = max(wall, key=lambda label: wall[label])
        sentence += f", about {_hours(wall[slowest])} of wall time ({slowest} is the longest pool)"
    out.append(sentence + ".")
    recorded = sum(line.recorded for line in lines)
    out.append(
        f"Estimates: {recorded} job(s) from the median recorded duration of earlier jobs of "
        f"the same identity; the others assumed: an agentic job holds its nodes for its "
        f"`duration`, a fixed-seq-len or eval point {MINUTES_PER_POINT} minutes. A job holds "
        f"whole nodes (runners.yaml's gpus-per-node, else 8)."
    )
    if budget is not None:
        out.append("")
        out.append(f"**Budget**: {text(budget.text())}.")
    if note:
        out.append("")
        out.append(text(note))
    return "\n".join(out)
