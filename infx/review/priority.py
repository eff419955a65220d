"""CI priority: a deterministic score per benchmark job (higher runs sooner), and the runner
labels a priority scheduler matches on.

The policy is InferenceX's `configs/ci-priority.yaml` (version 1), read at the sweep's
base so a pull request cannot raise its own jobs. A job's score:

- a PR labelled with a patchwork label (and none of its waivers) scores the patchwork
  score, whatever else is true;
- otherwise: the base score, plus the event's adjustment (push, pull_request,
  workflow_dispatch), `additional-node` for each node past the first the job holds,
  `multi-node` for a multi-node row, `agentic` for an agentic one, `eval-only` for an
  eval-only row, the row's precision and speculative decoding entries, the first
  framework prefix the row's framework equals or starts with followed by `-` (policy
  order), the row's model prefix entry, and the checklist adjustment when the PR carries
  a checklist label;
- rounded half up to 0.001 and written with three decimals (`3.250`).

With `runner-labels: true` each job also runs on `nodes:<N>` (the whole nodes it holds,
as the GPU budget counts them), `ci-job-<score>-<token>` (a token unique to the job in
its run) and `ci-attempt-<n>` (the run attempt, so a runner registered for an earlier
attempt never takes a re-run), plus `ci-skip-queue-pr-<N>` under the skip-queue label.

Pure: the policy's bytes, the plan's rows and the event's facts in; scores and labels out.
"""

from __future__ import annotations

import hashlib
import math
import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from decimal import ROUND_HALF_UP, Decimal
from typing import Any

from infx import schemas
from infx.errors import ConfigError
from infx.matrix.rows import MatrixRow, row_id

POLICY_FILE = "configs/ci-priority.yaml"
FORMAT = "infx-priority/1"
FILE = "priority.json"  # beside the plan, in the sweep-plan artifact
_QUANTUM = Decimal("0.001")
# A runner label as it may go into a JSON template GitHub's format() fills in: no braces.
_LABEL = re.compile(r"[A-Za-z0-9_.:/+-]{1,200}")


@dataclass(frozen=True)
class Policy:
    base: Decimal
    adjustments: Mapping[str, Any]
    labels: Mapping[str, Any]
    runner_labels: bool


@dataclass(frozen=True)
class Context:
    """What the event says: its name, the PR's labels and number (none for a push)."""

    event: str
    labels: frozenset[str] = frozenset()
    pr: int | None = None


@dataclass(frozen=True)
class Scored:
    score: Decimal
    nodes: int
    token: str

    @property
    def shown(self) -> str:
        return f"{self.score:.3f}"


@dataclass
class Priorities:
    runner_labels: bool
    skip_queue_pr: int | None
    rows: dict[str, Scored] = field(default_factory=dict)


def _numbers(value: Any, where: str) -> Iterable[tuple[str, float]]:
    if isinstance(value, Mapping):
        for key, item in value.items():
            yield from _numbers(item, f"{where}.{key}")
    elif isinstance(value, float):
        yield where, value


def parse_policy(doc: Any, source: str) -> Policy:
    """The policy of a parsed YAML document; a wrong key or value is a ConfigError."""
    problems = schemas.errors("ci-priority", doc)
    if problems:
        message = schemas.describe(problems[0]) or problems[0].message
        raise ConfigError(f"{source}: {message}")
    for where, number in _numbers(doc, "policy"):
        if not math.isfinite(number):
            raise ConfigError(f"{source}: {where.removeprefix('policy.')} is not a finite number")
    return Policy(
        Decimal(str(doc["base-score"])),
        doc["adjustments"],
        doc.get("labels", {}),
        bool(doc.get("runner-labels", False)),
    )


def _add(value: Any) -> Decimal:
    return Decimal(str(value)) if value is not None else Decimal(0)


def _prefix(value: str, table: Mapping[str, Any]) -> Decimal:
    for prefix, adjustment in table.items():
        if value == prefix or value.startswith(f"{prefix}-"):
            return _add(adjustment)
    return Decimal(0)


def score(row: MatrixRow, nodes: int, policy: Policy, context: Context) -> Decimal:
    """The job's score, rounded to 0.001 (half up)."""
    patch = policy.labels.get("patchwork") or {}
    waived = context.labels & set(patch.get("waived-by", ()))
    if context.labels & set(patch.get("names", ())) and not waived:
        return _add(patch["score"]).quantize(_QUANTUM, ROUND_HALF_UP)
    adj = policy.adjustments
    total = policy.base + _add(adj.get("event", {}).get(context.event))
    total += _add(adj.get("additional-node", 0)) * (nodes - 1)
    if "prefill" in row:
        total += _add(adj.get("multi-node"))
    if row.get("scenario-type") == "agentic-coding":
        total += _add(adj.get("agentic"))
    if row.get("eval-only") is True:
        total += _add(adj.get("eval-only"))
    total += _add(adj.get("precision", {}).get(str(row.get("precision", ""))))
    total += _add(adj.get("spec-decoding", {}).get(str(row.get("spec-decoding", ""))))
    total += _prefix(str(row.get("framework", "")), adj.get("framework-prefix", {}))
    total += _add(adj.get("model-prefix", {}).get(str(row.get("model-prefix", ""))))
    checklist = policy.labels.get("checklist-complete")
    if checklist and context.labels & set(checklist["names"]):
        total += _add(checklist["adjustment"])
    return total.quantize(_QUANTUM, ROUND_HALF_UP)


def token(run_id: int, row: MatrixRow) -> str:
    """16 hex digits naming one job of one run (the row and the run, hashed)."""
    return hashlib.sha256(f"{run_id}:{row_id(row)}".encode()).hexdigest()[:16]


def prioritize(
    rows: Iterable[tuple[MatrixRow, int]], policy: Policy, context: Context, run_id: int
) -> Priorities:
    """Every (row, nodes it holds) scored; the skip-queue PR when the PR asks for it."""
    skip = policy.labels.get("skip-queue") or {}
    asked = context.pr is not None and skip.get("name") in context.labels
    found = Priorities(policy.runner_labels, context.pr if asked else None)
    for row, nodes in rows:
        found.rows[row_id(row)] = Scored(
            score(row, nodes, policy, context), nodes, token(run_id, row)
        )
    return found


def as_json(found: Priorities) -> dict[str, Any]:
    return {
        "format": FORMAT,
        "runner-labels": found.runner_labels,
        "skip-queue-pr": found.skip_queue_pr,
        "rows": {
            key: {"score": s.shown, "nodes": s.nodes, "token": s.token}
            for key, s in found.rows.items()
        },
    }


def from_json(doc: Any, source: str) -> Priorities:
    """priority.json as `as_json` wrote it; anything else is a ConfigError."""
    try:
        if doc.get("format") != FORMAT:
            raise ValueError(f"format is not {FORMAT}")
        pr = doc["skip-queue-pr"]
        if pr is not None and (not isinstance(pr, int) or isinstance(pr, bool) or pr < 1):
            raise ValueError("skip-queue-pr is not a PR number")
        found = Priorities(bool(doc["runner-labels"]), pr)
        for key, item in doc["rows"].items():
            shown, nodes, tok = item["score"], item["nodes"], item["token"]
            if not re.fullmatch(r"-?[0-9]+\.[0-9]{3}", shown) or not re.fullmatch(
                r"[0-9a-f]{16}", tok
            ):
                raise ValueError(f"a row's score {shown!r} or token {tok!r} is malformed")
            if not isinstance(nodes, int) or isinstance(nodes, bool) or nodes < 1:
                raise ValueError(f"a row's nodes {nodes!r} is not a positive whole number")
            found.rows[key] = Scored(Decimal(shown), nodes, tok)
    except (AttributeError, KeyError, TypeError, ValueError) as exc:
        raise ConfigError(f"{source}: not a priority file ({exc})") from None
    return found


def labels_template(runner: str, scored: Scored, skip_queue_pr: int | None) -> str:
    """The job's runner labels as a JSON array whose `{0}` the workflow fills with the run
    attempt through GitHub's format(): `["mi355x","nodes:1","ci-job-3.250-…","ci-attempt-{0}"]`."""
    if not _LABEL.fullmatch(runner):
        raise ConfigError(f"runner label {runner[:60]!r} cannot be scheduled by priority")
    labels = [runner, f"nodes:{scored.nodes}", f"ci-job-{scored.shown}-{scored.token}"]
    labels.append("ci-attempt-{0}")
    if skip_queue_pr is not None:
        labels.append(f"ci-skip-queue-pr-{skip_queue_pr}")
    return "[" + ",".join(f'"{label}"' for label in labels) + "]"
