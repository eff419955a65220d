"""What a sweep will cost before its first GPU job: GPU-hours and minutes per job, the wall
time per runner pool, and the verdict against the label's budget.

Pure. A job's minutes are the median of the durations recorded for earlier jobs of the
same identity, or else an assumption stated in the job's `source`:

- identity is what the row measures (`job_key`): every field but those that say how it
  is produced (image, recipe fingerprint, exp-name, lengths, DRAM budget, component
  versions, workers' extra settings), so a new image keeps its config's history;
- recorded durations come from a `Durations` mapping (job key -> seconds, oldest first);
  `infx.matrix.timings` fills it from the job-timings file the workflow carries, and
  any other source (a results database) only needs to produce the same mapping;
- assumptions: a fixed-seq-len or eval point takes MINUTES_PER_POINT, an agentic job its
  `duration`, its eval included (AGENTX_FAST_MINUTES for a throughput job under the
  agentx-fast label);
- GPUs: a job *holds* whole nodes (no other job gets the rest of a node a tp4 server half
  fills): a single-node job its node, a multi-node job the `node-count` its plan row
  carries (the format's planner counts it: `infx.matrix.nodes`), else every node of every
  worker (or the nodes its recipe asks for, `PREFILL_NODES=`/`DECODE_NODES=`, when more).
  GPUs per node come from runners.yaml (`node_gpus`), else GPUS_PER_NODE. The budget
  counts GPU-hours held; the GPUs the servers use are said beside it where they differ.
"""

from __future__ import annotations

import math
import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from infx.digest import hexdigest
from infx.errors import ConfigError
from infx.matrix.contract import row_gpus
from infx.matrix.expand import is_agentic, is_multinode, row_concs
from infx.matrix.rows import MatrixRow
from infx.numbers import SQLITE_INTEGER_END, decimal

# A fixed-seq-len or eval point: server start, warm-up and one client run.
MINUTES_PER_POINT = 15
# The fast AgentX profile (label agentx-fast): one warm-up request per lane, 20 minutes.
AGENTX_FAST_MINUTES = 20
# Recorded durations used per identity: the newest ones, so a faster recipe shows soon.
RECENT = 10
GPUS_PER_NODE = 8

# Row fields that say how a point is produced rather than what it measures.
_RECIPE_FIELDS = frozenset(
    {"image", "exp-name", "recipe-fingerprint", "max-model-len", "duration", "total-cpu-dram-gb"}
)

Durations = Mapping[str, Sequence[float]]
# Runner label -> GPUs per node (`node_gpus`); a label it lacks has GPUS_PER_NODE.
NodeGpus = Mapping[str, int]
# The launcher exports a worker's settings as one shell line (`export <settings joined by
# spaces>`): the shell splits it into words at its default IFS blanks, so `X=2 ` sets X to 2
# and one setting can hold several assignments.
_SHELL_BLANKS = re.compile(r"[ \t\n]+")


def node_gpus(
    labels: Mapping[str, Sequence[str]], hardware: Mapping[str, Mapping[str, int]]
) -> dict[str, int]:
    """GPUs per node of each runner label: its own `hardware:` entry in runners.yaml, else
    the entries of the labels that share its nodes (`cluster:...`) when they agree."""
    sized = {label: int(hw["gpus-per-node"]) for label, hw in hardware.items()}
    by_node: dict[str, set[int]] = {}
    for label, nodes in labels.items():
        if label in sized:
            for node in nodes:
                by_node.setdefault(node, set()).add(sized[label])
    out = dict(sized)
    for label, nodes in labels.items():
        if label in out:
            continue
        found = {size for node in nodes for size in by_node.get(node, ())}
        if len(found) == 1:
            out[label] = found.pop()
    return out


def priced_sizes(head: Mapping[str, int], base: Mapping[str, int]) -> dict[str, int]:
    """GPUs per node each label is priced at when a pull request plans: no fewer than the
    base's runners.yaml says (a label it does not size: GPUS_PER_NODE), more when the head
    says more. runners.yaml only describes the runners GitHub knows by those labels, so a
    PR's edit may not make its jobs cheaper: a node it said holds one GPU priced a tp4 job
    at 4 GPUs instead of the 8 it holds, on a label the base sized or on one it added."""
    return {
        label: max(head.get(label, 0), base.get(label, GPUS_PER_NODE)) for label in {*head, *base}
    }


def _asked_nodes(role: str, worker: Mapping[str, Any]) -> int:
    """The most nodes the role's `PREFILL_NODES=`/`DECODE_NODES=` settings ask for (0: none),
    for a row without the plan's `node-count` (a format whose planner counts no nodes);
    a value that is not ASCII digits (another script's, a blank, a quote, an expression) is
    one the estimate cannot price, so it refuses rather than price the job lower."""
    name = f"{role.upper()}_NODES="
    asked = 0
    for setting in worker.get("additional-settings") or ():
        for word in _SHELL_BLANKS.split(str(setting)):
            if not word.startswith(name):
                continue
            value = decimal(word.removeprefix(name), below=SQLITE_INTEGER_END)
            if value is None:
                raise ConfigError(
                    f"{role} setting {str(setting)!r}: {name[:-1]} is not a whole number in "
                    "ASCII digits, so the GPU-hour estimate cannot price the job"
                )
            asked = max(asked, value)
    return asked


def _planned_nodes(count: object) -> int:
    if isinstance(count, int) and not isinstance(count, bool) and 0 < count < SQLITE_INTEGER_END:
        return count
    raise ConfigError(f"node-count {str(count)[:40]!r} is not a node count the estimate can price")


def held_nodes(row: MatrixRow, per_node: int) -> int:
    """Nodes a job takes: one for a single-node job (more only if its GPUs exceed a node);
    for a multi-node job the plan's `node-count` where its format prints one (what the
    scheduler allocates, so plan and estimate never differ) but never fewer than its GPUs
    fill, else each worker's own nodes, or what its recipe asks for when more."""
    filled = max(1, math.ceil(row_gpus(row)["total"] / per_node))
    if not is_multinode(row):
        return filled
    if "node-count" in row:
        # Never fewer than its servers' GPUs fill: `num-nodes: 1` for 32 GPUs is no 8-GPU job.
        return max(_planned_nodes(row["node-count"]), filled)
    nodes = 0
    for role in ("prefill", "decode"):
        worker = row[role]
        gpus = int(worker["tp"] * worker.get("pp", 1) * worker.get("pcp-size", 1))
        filled = int(worker["num-worker"]) * max(1, math.ceil(gpus / per_node))
        nodes += max(filled, _asked_nodes(role, worker))
    return nodes


def _measured(row: MatrixRow) -> dict[str, object]:
    out: dict[str, object] = {}
    for key, value in row.items():
        if key in _RECIPE_FIELDS:
            continue
        if key in ("router", "kv-offload-backend") and isinstance(value, Mapping):
            value = value.get("name")
        elif key in ("prefill", "decode") and isinstance(value, Mapping):
            value = {k: v for k, v in value.items() if k != "additional-settings"}
        out[key] = value
    return out


def job_key(row: MatrixRow) -> str:
    """A short stable name for what a row measures (the same for a new image or recipe)."""
    return hexdigest(_measured(row))[:20]


def points(row: MatrixRow) -> int:
    """Client runs one job makes: its concurrencies; a multi-node eval runs at one of them
    unless it evaluates them all."""
    if is_multinode(row) and row.get("run-eval") and not row.get("eval-all-concs"):
        return 1
    return len(row_concs(row))


def assumed_minutes(row: MatrixRow, agentx_fast: bool = False) -> tuple[float, str]:
    if is_agentic(row) and "duration" in row:
        if agentx_fast and not row.get("run-eval"):
            return AGENTX_FAST_MINUTES, f"assumed: agentx-fast profile, {AGENTX_FAST_MINUTES} min"
        return row["duration"] / 60, f"assumed: its duration, {row['duration']} s"
    count = points(row)
    return (
        MINUTES_PER_POINT * count,
        f"assumed: {MINUTES_PER_POINT} min per point x {count}",
    )


@dataclass(frozen=True)
class JobCost:
    row: MatrixRow
    is_eval: bool
    minutes: float
    gpus: int  # the servers use
    source: str
    recorded: int  # recorded durations behind the estimate (0: assumed)
    nodes: int = 1  # the job holds
    per_node: int = GPUS_PER_NODE

    @property
    def held_gpus(self) -> int:
        return self.nodes * self.per_node

    @property
    def gpu_hours(self) -> float:
        """GPU-hours the servers use."""
        return self.minutes / 60 * self.gpus

    @property
    def held_hours(self) -> float:
        """GPU-hours the job holds: its whole nodes for its whole run (what a budget counts)."""
        return self.minutes / 60 * self.held_gpus

    def as_json(self) -> dict[str, Any]:
        return {
            "key": job_key(self.row),
            "exp-name": self.row.get("exp-name"),
            "runner": self.row.get("runner"),
            "conc": self.row.get("conc"),
            "eval": self.is_eval,
            "gpus": self.gpus,
            "gpus-held": self.held_gpus,
            "nodes": self.nodes,
            "minutes": round(self.minutes, 2),
            "gpu-hours": round(self.held_hours, 3),
            "gpu-hours-used": round(self.gpu_hours, 3),
            "source": self.source,
        }


def job_cost(
    row: MatrixRow,
    is_eval: bool,
    durations: Durations,
    agentx_fast: bool = False,
    node_gpus: NodeGpus | None = None,
) -> JobCost:
    gpus = row_gpus(row)["total"]
    per_node = int((node_gpus or {}).get(str(row.get("runner")), GPUS_PER_NODE))
    nodes = held_nodes(row, per_node)
    recent = list(durations.get(job_key(row), ()))[-RECENT:]
    fast_agentic = agentx_fast and is_agentic(row) and not row.get("run-eval")
    if recent and not fast_agentic:
        import statistics  # only with recorded durations

        minutes = statistics.median(recent) / 60
        source = f"recorded: median of {len(recent)}"
        return JobCost(row, is_eval, minutes, gpus, source, len(recent), nodes, per_node)
    minutes, source = assumed_minutes(row, agentx_fast)
    return JobCost(row, is_eval, minutes, gpus, source, 0, nodes, per_node)


def estimate(
    rows: Iterable[tuple[MatrixRow, bool]],
    durations: Durations | None = None,
    agentx_fast: bool = False,
    node_gpus: NodeGpus | None = None,
) -> list[JobCost]:
    """The cost of every (row, is_eval) job, in the order given. `node_gpus`: GPUs per node
    of each runner label (`node_gpus` of runners.yaml; a label it lacks has 8)."""
    return [
        job_cost(row, is_eval, durations or {}, agentx_fast, node_gpus) for row, is_eval in rows
    ]


def wall_minutes(costs: Sequence[JobCost], pools: Mapping[str, int]) -> dict[str, float]:
    """Rough wall time per runner label: its jobs' node-minutes spread over its nodes (a job
    takes the whole nodes it holds), never less than its longest job. A label missing from
    runners.yaml counts as one node."""
    node_minutes: dict[str, float] = {}
    longest: dict[str, float] = {}
    for cost in costs:
        label = str(cost.row.get("runner", "?"))
        nodes = cost.nodes
        node_minutes[label] = node_minutes.get(label, 0.0) + cost.minutes * nodes
        longest[label] = max(longest.get(label, 0.0), cost.minutes)
    return {
        label: max(longest[label], total / max(1, pools.get(label, 1)))
        for label, total in node_minutes.items()
    }


# --- the budget -------------------------------------------------------------------------

PUSH = "push"


@dataclass(frozen=True)
class BudgetVerdict:
    """The plan's GPU-hours (held: whole nodes) against the budget of its category: the
    sweep label, or `push` for a push to the main branch. No budget for the category means
    no limit."""

    category: str
    gpu_hours: float  # held
    budget: float | None
    held: str = ""  # why the plan waits for approval whatever it costs ("": it need not)
    used_hours: float | None = None  # what the servers use (None: the same)
    # A rerun: the GPU-hours its lineage was priced at before it (the original sweep and
    # every earlier rerun); the budget holds the lineage, not one dispatch.
    before: float = 0.0

    @property
    def lineage_hours(self) -> float:
        return self.gpu_hours + self.before

    def _used(self) -> str:
        used = self.used_hours
        if used is None or round(used, 1) == round(self.gpu_hours, 1):
            return ""
        return f" (whole nodes; servers use {used:,.1f})"

    @property
    def over(self) -> bool:
        if self.held and not self.gpu_hours <= 0:
            return True  # held for who asked, whatever the budget; a plan of no jobs asks no one
        if self.before and self.gpu_hours <= 0:
            return False  # a rerun of no jobs spends nothing, whatever its lineage did
        # To a millionth of a GPU-hour: a sum of float job costs exactly at the budget
        # lands a hair above it. NaN and infinity stay over any budget.
        return self.budget is not None and not round(self.lineage_hours, 6) <= self.budget

    def _hours(self) -> str:
        """The GPU-hours held against the budget: a rerun's with its lineage's before it."""
        if self.budget is None:
            hours = f"{self.lineage_hours:,.1f} GPU-hours"
        else:
            hours = f"{self.lineage_hours:,.1f} of {self.budget:,.1f} GPU-hours"
        if self.before:
            hours += (
                f" ({self.gpu_hours:,.1f} for this rerun on top of {self.before:,.1f} "
                "its lineage was priced at)"
            )
        return hours

    def text(self) -> str:
        what = "a push to main" if self.category == PUSH else f"label {self.category}"
        if self.held and self.over:
            hours = self._hours()
            if self.budget is None:
                hours += f"; no budget is set for {what}"
            return f"approval needed: {self.held} ({hours}){self._used()}"
        if self.budget is None:
            return f"{self._hours()}; no budget is set for {what}{self._used()}"
        verdict = "over budget" if self.over else "within budget"
        return f"{verdict}: {self._hours()} for {what}{self._used()}"


def verdict(costs: Sequence[JobCost], category: str, budgets: Mapping[str, float]) -> BudgetVerdict:
    """The GPU-hours the plan's jobs hold against the category's budget."""
    held = math.fsum(cost.held_hours for cost in costs)
    used = math.fsum(cost.gpu_hours for cost in costs)
    budget = budgets.get(category)
    return BudgetVerdict(category, held, None if budget is None else float(budget), "", used)


def estimate_document(
    costs: Sequence[JobCost], budget: BudgetVerdict, wall: Mapping[str, float]
) -> dict[str, Any]:
    """What the planning job records next to the plan: every job's estimate and its source,
    the wall time per pool and the budget verdict."""
    return {
        "format": "infx-sweep-estimate/1",
        "category": budget.category,
        "gpu-hours": round(budget.gpu_hours, 3),
        "gpu-hours-used": round(math.fsum(cost.gpu_hours for cost in costs), 3),
        "lineage-gpu-hours-before": round(budget.before, 3),
        "budget": budget.budget,
        "over-budget": budget.over,
        "verdict": budget.text(),
        "wall-hours": {label: round(minutes / 60, 2) for label, minutes in sorted(wall.items())},
        "jobs": [cost.as_json() for cost in costs],
    }
