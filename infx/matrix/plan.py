"""Turn the changelog entries of a diff into a sweep plan: matrix rows per bucket.

Pure: takes parsed entries, master configs and runner hardware; returns data.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any

from infx.changelog.check import resolve_keys
from infx.errors import ConfigError
from infx.matrix.evals import agentic_evals, multi_node_evals, single_node_evals
from infx.matrix.expand import (
    AGENTIC,
    FIXED,
    SCENARIOS,
    Hardware,
    Row,
    expand,
    fingerprint,
    seq_len_name,
)
from infx.matrix.load import MasterConfigs

STANDARD_SEQ = ("1k1k", "8k1k")
EVAL_BUCKETS = ("evals", "agentic_evals", "multinode_evals", "multinode_agentic_evals")


@dataclass(frozen=True)
class Selection:
    """What the changelog asks of one config (merged over every entry naming it)."""

    scenarios: frozenset[str] = frozenset(SCENARIOS)
    evals_only: bool = False
    all_evals: bool = False
    append_only: bool = False


@dataclass(frozen=True)
class PlanOptions:
    """Flags that come from PR labels rather than the changelog."""

    trim_conc: bool = False
    all_evals: bool = False
    evals_only: bool = False
    agentic_only: bool = False


@dataclass
class SummaryLine:
    config: str
    runner: str
    scenario: str
    rows: int
    concurrencies: list[int]


@dataclass
class Plan:
    buckets: dict[str, Any]
    summary: list[SummaryLine] = field(default_factory=list)

    def as_json(self) -> dict[str, Any]:
        return self.buckets


def select_configs(entries: Iterable[dict[str, Any]], keys: list[str]) -> dict[str, Selection]:
    """Config key -> selection, in master-config order. Several entries naming one config
    merge: scenarios unite, all-evals if any asks, evals-only and append-only only if all do."""
    asked: dict[str, list[Selection]] = defaultdict(list)
    for entry in entries:
        selection = Selection(
            frozenset(entry.get("scenario-type") or SCENARIOS),
            bool(entry.get("evals-only")),
            bool(entry.get("all-evals")),
            bool(entry.get("append-only")),
        )
        for pattern in entry.get("config-keys", []):
            for key in resolve_keys(pattern, keys):
                asked[key].append(selection)
    merged = {}
    for key in keys:
        if key in asked:
            items = asked[key]
            merged[key] = Selection(
                frozenset().union(*(s.scenarios for s in items)),
                all(s.evals_only for s in items),
                any(s.all_evals for s in items),
                all(s.append_only for s in items),
            )
    return merged


def _points(rows: Iterable[Row]) -> set[tuple[str, int]]:
    points = set()
    for row in rows:
        fp = fingerprint(row)
        for conc in row["conc"] if isinstance(row["conc"], list) else [row["conc"]]:
            points.add((fp, conc))
    return points


def _only_new(key: str, head_rows: list[Row], base_rows: list[Row]) -> list[Row]:
    """Rows (and concurrencies) absent from the base; base points must all survive."""
    head_points, base_points = _points(head_rows), _points(base_rows)
    lost = base_points - head_points
    if lost:
        raise ConfigError(
            f"{key}: append-only entry, but {len(lost)} existing point(s) changed or "
            "disappeared; append-only may only add points"
        )
    fresh = []
    for row in head_rows:
        fp = fingerprint(row)
        if isinstance(row["conc"], list):
            new = [c for c in row["conc"] if (fp, c) not in base_points]
            if new:
                fresh.append({**row, "conc": new})
        elif (fp, row["conc"]) not in base_points:
            fresh.append(row)
    return fresh


def trim_conc(rows: list[Row]) -> list[Row]:
    """Keep the lowest concurrency of each curve (rows equal but for conc and exp-name);
    a multi-node concurrency list shrinks to its minimum."""
    kept: list[Row] = []
    curves: dict[str, int] = {}
    for row in rows:
        if isinstance(row["conc"], list) and len(row["conc"]) > 1:
            kept.append({**row, "conc": [min(row["conc"])]})
            continue
        curve = fingerprint(row)
        if curve not in curves:
            curves[curve] = len(kept)
            kept.append(row)
        elif _conc(row) < _conc(kept[curves[curve]]):
            kept[curves[curve]] = row
    return kept


def _conc(row: Row) -> int:
    return row["conc"][0] if isinstance(row["conc"], list) else row["conc"]


def _fixed_bucket(row: Row) -> str:
    return seq_len_name(row["isl"], row["osl"])


def _empty_buckets() -> dict[str, Any]:
    return {
        "single_node": {name: [] for name in (*STANDARD_SEQ, "agentic")},
        "multi_node": {name: [] for name in (*STANDARD_SEQ, "agentic")},
        **{name: [] for name in EVAL_BUCKETS},
    }


def build_plan(
    selections: dict[str, Selection],
    head: MasterConfigs,
    hardware: dict[str, Hardware],
    options: PlanOptions = PlanOptions(),
    base: MasterConfigs | None = None,
    metadata: dict[str, Any] | None = None,
) -> Plan:
    buckets = _empty_buckets()
    summary: list[SummaryLine] = []
    for key, selection in selections.items():
        config = head.configs[key]
        scenarios = tuple(
            s
            for s in SCENARIOS
            if s in selection.scenarios and (s == AGENTIC or not options.agentic_only)
        )
        expansion = expand(key, config, hardware, scenarios)
        fixed, agentic = expansion.fixed, expansion.agentic
        if selection.append_only:
            if base is not None and key in base.configs:
                before = expand(key, base.configs[key], hardware, scenarios)
                fixed = _only_new(key, fixed, before.fixed)
                agentic = _only_new(key, agentic, before.agentic)
            evals = {name: [] for name in EVAL_BUCKETS}
        else:
            evals = _evals(expansion.multinode, fixed, agentic, selection, options)
        evals_only = options.evals_only or selection.evals_only
        if evals_only:
            fixed, agentic = [], []
        if options.trim_conc:
            fixed, agentic = trim_conc(fixed), trim_conc(agentic)
        shape = "multi_node" if expansion.multinode else "single_node"
        for row in fixed:
            row["recipe-fingerprint"] = fingerprint(row)
            buckets[shape].setdefault(_fixed_bucket(row), []).append(row)
        for row in agentic:
            row["recipe-fingerprint"] = fingerprint(row)
            buckets[shape]["agentic"].append(row)
        for name, rows in evals.items():
            buckets[name].extend(rows)
        summary.extend(
            _summary(key, config, FIXED, fixed + evals["evals"] + evals["multinode_evals"])
        )
        summary.extend(
            _summary(
                key,
                config,
                AGENTIC,
                agentic + evals["agentic_evals"] + evals["multinode_agentic_evals"],
            )
        )
    buckets["changelog_metadata"] = metadata or {}
    return Plan(buckets, summary)


def _evals(
    multinode: bool,
    fixed: list[Row],
    agentic: list[Row],
    selection: Selection,
    options: PlanOptions,
) -> dict[str, list[Row]]:
    all_evals = options.all_evals or selection.all_evals
    wants_agentic = all_evals or options.evals_only or selection.evals_only
    agentic_rows = agentic_evals(agentic) if wants_agentic else []
    if multinode:
        return {
            "evals": [],
            "agentic_evals": [],
            "multinode_evals": multi_node_evals(fixed, all_evals),
            "multinode_agentic_evals": agentic_rows,
        }
    return {
        "evals": single_node_evals(fixed, all_evals),
        "agentic_evals": agentic_rows,
        "multinode_evals": [],
        "multinode_agentic_evals": [],
    }


def _summary(key: str, config: dict[str, Any], scenario: str, rows: list[Row]) -> list[SummaryLine]:
    if not rows:
        return []
    concs = sorted(
        {c for r in rows for c in (r["conc"] if isinstance(r["conc"], list) else [r["conc"]])}
    )
    return [SummaryLine(key, config["runner"], scenario, len(rows), concs)]


def canary(plan: dict[str, Any]) -> tuple[Row | None, dict[str, Any]]:
    """The lowest-concurrency single-node 1k1k/8k1k throughput row, and the plan without it."""
    best: tuple[int, str, int] | None = None
    for name in STANDARD_SEQ:
        for index, row in enumerate(plan.get("single_node", {}).get(name, [])):
            if row.get("run-eval"):
                continue
            candidate = (row["conc"], name, index)
            if best is None or candidate[0] < best[0]:
                best = candidate
    if best is None:
        return None, plan
    _, name, index = best
    rows = plan["single_node"][name]
    remaining = {
        **plan,
        "single_node": {**plan["single_node"], name: rows[:index] + rows[index + 1 :]},
    }
    return rows[index], remaining
