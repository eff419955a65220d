"""Paired repeats (issue #32 item 3): a repeat that settles measures main's image beside
this PR's, on one node, interleaved.

Repeats of a PR alone share their session's conditions (a node, a day, a driver) and main's
history does not; `infx results compare --baseline-repeat` judges the differences of pairs
instead (infx.results.verdict.paired), where the session cancels. This module plans those
pairs from the rows a `repeat` rerun measures again:

- main's half of a pair is the same config as the base branch's master config plans it
  (`base_rows`: the rows of the plan at the base, matched by the points they measure,
  recipe aside). A config main does not plan (new in this PR), or plans as the very same
  row (the PR left it as main has it), has no partner: it is repeated alone, as before,
  and the compare judges it against main's history;
- both halves are pinned to one node: the node the source run measured the PR's row on
  when its record says so, else one node of the row's pool (round-robin over pairs, so
  pairs spread over the pool while each pair stays on its node);
- the order alternates, pair by pair (PR first, then main first, ...): a drift within the
  session (a node warming up) falls on both sides alike over the pairs;
- both halves are priced: main's rows join the rerun's plan, whose estimate the budget
  gate reads.

Pure."""

from __future__ import annotations

import copy
import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any, cast

from infx.matrix.rows import (
    EVAL_BUCKETS,
    MatrixPlan,
    MatrixRow,
    PlanDocument,
    plan_of,
    row_id,
)
from infx.rerun.rules import JobOutcome, _point
from infx.results.table.rows import Row, Table

PR = "pr"
BASE = "base"
# Beside the rerun's sweep.json: the pairs, their nodes and order (what the compare step
# reads to split the repeat's measurements into this PR's table and main's).
PAIRS_FILE = "pairs.json"


@dataclass(frozen=True)
class Pair:
    """One pair of a paired repeat: this PR's row and main's, on one node, in order."""

    pr: MatrixRow
    base: MatrixRow | None  # None: main plans no such config; the PR's row runs alone
    is_eval: bool
    node: str  # "" when the pool knows no node: both halves then go to the whole pool
    first: str  # PR or BASE: which half runs first

    @property
    def order(self) -> tuple[str, ...]:
        """The halves in the order they run on the node."""
        if self.base is None:
            return (PR,)
        return (PR, BASE) if self.first == PR else (BASE, PR)


def config_key(row: MatrixRow, is_eval: bool) -> str:
    """What a row measures, recipe (image, exp-name, fingerprint) aside: the points of its
    job, without the hardware the runner reports. Two rows of one config, one at the PR and
    one at main, share it."""
    from infx.results.ingest.process import eval_concurrency, expected_outputs, identity

    if is_eval or row.get("run-eval"):
        concs = [eval_concurrency(row)]
        kind = "accuracy"
    else:
        concs = [conc for conc, _ in expected_outputs(row)]
        kind = "throughput"
    points = []
    for conc in concs:
        ident = {k: v for k, v in identity(row, conc).items() if k != "hardware"}
        points.append(ident)
    return json.dumps([kind, points], sort_keys=True)


def base_rows(base_jobs: Sequence[tuple[MatrixRow, bool]]) -> dict[str, MatrixRow]:
    """Main's rows by config (the first of equal configs: a plan holds each once)."""
    found: dict[str, MatrixRow] = {}
    for row, is_eval in base_jobs:
        found.setdefault(config_key(row, is_eval), row)
    return found


def source_nodes(source: Sequence[JobOutcome]) -> dict[str, str]:
    """Row id -> the node the source run measured it on (its successful job's)."""
    return {row_id(o.row): o.node for o in source if o.node and o.kind is None}


def pairs(
    jobs: Sequence[tuple[MatrixRow, bool]],
    base: Mapping[str, MatrixRow],
    nodes: Mapping[str, str],
    pools: Mapping[str, Sequence[str]],
) -> list[Pair]:
    """The pairs of a paired repeat of these PR rows (`jobs`, as the rerun plans them)."""
    out: list[Pair] = []
    turn: dict[str, int] = {}
    for row, is_eval in jobs:
        partner = base.get(config_key(row, is_eval))
        if partner is not None and _planned(partner, is_eval) == _planned(row, is_eval):
            # Main measures these points with this very recipe (the PR left the config as
            # main has it, its name aside): a second job would measure the same again and
            # collect as the same points (`halves`), at twice the GPU-hours. It runs alone,
            # judged against main's history.
            partner = None
        node = nodes.get(row_id(row), "")
        if not node:
            label = str(row["runner"])
            pool = list(pools.get(label, []))
            if pool:
                node = pool[turn.get(label, 0) % len(pool)]
                turn[label] = turn.get(label, 0) + 1
        first = PR if len(out) % 2 == 0 else BASE
        out.append(Pair(row, partner, is_eval, node, first))
    return out


def paired_pins(found: Sequence[Pair]) -> dict[str, str]:
    """Row id -> node, for both halves of every pair pinned to a node (the rerun's
    pins.json, which the benchmark jobs' runner labels read)."""
    pins: dict[str, str] = {}
    for pair in found:
        if not pair.node:
            continue
        pins[row_id(pair.pr)] = pair.node
        if pair.base is not None:
            pins[row_id(pair.base)] = pair.node
    return pins


def document(found: Sequence[Pair]) -> list[dict[str, object]]:
    """pairs.json: what the jobs run, in order, and where (the compare step splits the
    measurements into this PR's table and main's by it)."""
    return [
        {
            "node": p.node,
            "order": list(p.order),
            "eval": p.is_eval,
            "pr": dict(p.pr),
            "base": None if p.base is None else dict(p.base),
        }
        for p in found
    ]


def with_partners(document: PlanDocument, found: Sequence[Pair]) -> PlanDocument:
    """The rerun's plan with main's half of each pair beside the PR's row, in the pair's
    order (the jobs are dispatched in plan order; both are pinned to the pair's node, whose
    runner takes one job at a time). A canary is a PR row run first: its partner heads
    the canary's bucket of the remaining plan."""
    after: dict[str, list[tuple[MatrixRow, bool]]] = {}
    for pair in found:
        if pair.base is not None:
            after.setdefault(row_id(pair.pr), []).append((pair.base, pair.first == BASE))
    out = copy.deepcopy(document)
    plan = plan_of(out)
    for rows in _lists(plan):
        placed: list[MatrixRow] = []
        for row in rows:
            partners = after.pop(row_id(row), [])
            placed += [base for base, ahead in partners if ahead]
            placed.append(row)
            placed += [base for base, ahead in partners if not ahead]
        rows[:] = placed
    canaries: list[MatrixRow] = []
    if "remaining" in out:
        canaries = out["canary"]
    for canary in canaries:
        partners = after.pop(row_id(canary), [])
        name = "1k1k" if (canary.get("isl"), canary.get("osl")) == (1024, 1024) else "8k1k"
        plan["single_node"].setdefault(name, [])[0:0] = [base for base, _ in partners]
    return out


def _lists(plan: MatrixPlan) -> list[list[MatrixRow]]:
    """Every list of rows of a plan: its buckets, then its eval buckets."""
    found = [*plan["single_node"].values(), *plan["multi_node"].values()]
    return found + [plan.get(name) or [] for name in EVAL_BUCKETS]


@dataclass(frozen=True)
class Halves:
    """A paired repeat's own table cut in two: what this PR's image measured and what main's
    did beside it."""

    pr: Table
    base: Table
    other: Table  # rows no pair planned (a canary due first): no repeat of anything asked
    pairs: int  # pairs whose main half left a row in the table
    shared: int  # points main's row and the PR's measure with one recipe: kept as the PR's


def _measured(row: Row) -> str:
    """A result row's point as the job that measured it planned it (rules._point's text,
    the master config's key aside: main's row and the PR's may name different ones)."""
    recipe = {k: v for k, v in row["recipe"].items() if k != "config-key"}
    return _point(row["kind"], row["identity"], recipe)


def _planned(row: Mapping[str, Any], is_eval: bool) -> set[str]:
    from infx.results.ingest.process import eval_concurrency, expected_outputs, identity, recipe

    planned = cast(MatrixRow, dict(row))
    how = recipe(planned)
    if is_eval or planned.get("run-eval"):
        return {_point("accuracy", identity(planned, eval_concurrency(planned)), how)}
    return {_point("throughput", identity(planned, c), how) for c, _ in expected_outputs(planned)}


def halves(table: Table, recorded: Sequence[Mapping[str, Any]]) -> Halves:
    """Split a paired repeat's own table by its pairs.json (`recorded`): a row measured by
    main's half of a pair goes to main's table, a row of the PR's half (paired or alone) to
    this PR's, any other row (a canary due first, of a config nobody asked to repeat) to
    `other`: it was measured in the pairs' session without a partner, and pooled with the
    PR's runs it would carry that session's speed into its config's verdict. A point both
    halves plan with the very same recipe (the PR left the config as main has it) cannot be
    told apart once collected (one point, the later job's): it stays the PR's, and the
    config is then judged against main's history, unpaired. Without pairs, every row is
    the PR's."""
    mine: set[str] = set()
    theirs: dict[str, int] = {}
    for n, entry in enumerate(recorded):
        is_eval = bool(entry.get("eval"))
        pr, base = entry.get("pr"), entry.get("base")
        if isinstance(pr, Mapping):
            mine |= _planned(pr, is_eval)
        if isinstance(base, Mapping):
            theirs.update(dict.fromkeys(_planned(base, is_eval), n))
    shared = set(theirs) & mine
    split: dict[str, list[Row]] = {"pr": [], "base": [], "other": []}
    partners: set[int] = set()
    seen: set[str] = set()
    for row in table["rows"]:
        point = _measured(row)
        seen.add(point)
        if point in theirs and point not in shared:
            split["base"].append(row)
            partners.add(theirs[point])
        elif point in mine or not recorded:
            split["pr"].append(row)
        else:
            split["other"].append(row)
    kept = {k: v for k, v in table.items() if k != "rows"}
    tables = {side: cast(Table, {**kept, "rows": rows}) for side, rows in split.items()}
    return Halves(
        pr=tables["pr"],
        base=tables["base"],
        other=tables["other"],
        pairs=len(partners),
        shared=len(shared & seen),
    )
