"""`sweep priority` and `sweep priority-labels` as use cases: score every job of a plan
(setup, which has the base commit and the event), then give one chunk's jobs their runner
labels (the `rows` job of benchmark-tmpl.yml). `read_policy`, `read_context` and
`read_sizes` are the edges; the rest is pure."""

from __future__ import annotations

import json
from collections import Counter
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from infx.errors import ConfigError
from infx.markdown import table, text
from infx.matrix.cost import GPUS_PER_NODE, held_nodes
from infx.matrix.rows import PlanDocument, chunk_rows, jobs_of, row_id
from infx.review.priority import (
    FILE,
    Context,
    Policy,
    Priorities,
    as_json,
    labels_template,
    parse_policy,
    prioritize,
)
from infx.sweep.outcome import Outcome, json_bytes

_COMPACT = (",", ":")


def read_policy(root: Path, ref: str, path: str) -> Policy | None:
    """The policy as committed at `ref` (None: the repository has none there)."""
    from infx import git
    from infx.matrix.load import load_yaml, yaml_error, yaml_problem

    data = git.read_at(ref, path, root)
    if data is None:
        return None
    source = f"{path} at {ref}"
    try:
        doc = load_yaml(data)
    except yaml_error() as exc:
        raise yaml_problem(source, exc) from None
    return parse_policy(doc, source)


def event_context(name: str, payload: Mapping[str, Any]) -> Context:
    """The event's name, and for a pull request its labels and number."""
    pull = payload.get("pull_request") or {}
    labels = frozenset(
        str(label.get("name"))
        for label in pull.get("labels") or ()
        if isinstance(label, dict) and label.get("name")
    )
    number = pull.get("number")
    return Context(name, labels, number if isinstance(number, int) else None)


def read_context(event_name: str) -> Context:
    """The event this step runs for, from its payload when Actions names one; else only
    `event_name` (a local run)."""
    import os

    from infx.github.actions import event

    return event_context(*event()) if os.environ.get("GITHUB_EVENT_PATH") else Context(event_name)


def read_sizes(root: Path, ref: str, runners_path: str) -> dict[str, int]:
    """The GPUs of one node of each runner label, from the runners file at `ref` ({} when
    there is none)."""
    from infx.matrix.cost import node_gpus
    from infx.matrix.sources import load_runners

    runners = load_runners(root, ref, runners_path).runners
    return node_gpus(runners.labels, runners.hardware) if runners else {}


def priority_outcome(
    document: PlanDocument,
    policy: Policy | None,
    context: Context,
    run_id: int,
    sizes: Mapping[str, int],
    out: Path,
) -> Outcome:
    """Score every job of the plan into `out` (priority.json); without a policy, nothing."""
    if policy is None:
        return Outcome(
            stdout=["no priority policy at the base: every job runs on its runner label"]
        )
    rows = [
        (row, held_nodes(row, sizes.get(row["runner"], GPUS_PER_NODE)))
        for row, _ in jobs_of(document)
    ]
    found = prioritize(rows, policy, context, run_id)
    counts = Counter(s.shown for s in found.rows.values())
    where = "with runner labels" if found.runner_labels else "scores only (runner-labels is off)"
    lines = [f"priority of {len(found.rows)} job(s), {where} -> {out}"]
    summary = "### Job priorities\n\n" + table(
        ("score", "jobs"), [(text(score), n) for score, n in sorted(counts.items(), reverse=True)],
        ("right", "right"),
    )  # fmt: skip
    return Outcome({out: json_bytes(as_json(found))}, stdout=lines, summary=summary)


def labels_outcome(
    document: PlanDocument,
    bucket: str,
    index: int,
    found: Priorities | None,
    pins: Mapping[str, str],
) -> Outcome:
    """The job output `labels`: per row of the chunk, the JSON array template of its runner
    labels, or "" when the row runs on its runner label (or node) alone."""
    rows = chunk_rows(document, bucket, index)
    out = []
    for row in rows:
        scored = found.rows.get(row_id(row)) if found is not None and found.runner_labels else None
        if scored is None:
            out.append("")
            continue
        runner = pins.get(row_id(row)) or row["runner"]
        out.append(labels_template(runner, scored, found.skip_queue_pr if found else None))
    labelled = sum(1 for item in out if item)
    return Outcome(
        outputs={"labels": json.dumps(out, separators=_COMPACT)},
        stdout=[f"{bucket} chunk {index}: {labelled} of {len(rows)} row(s) with priority labels"],
    )


def read_priorities(plan_path: Path) -> Priorities | None:
    """priority.json beside a plan (None: no policy scored it)."""
    from infx.review.priority import from_json

    path = plan_path.parent / FILE
    if not path.is_file():
        return None
    try:
        doc = json.loads(path.read_bytes())
    except (json.JSONDecodeError, UnicodeDecodeError) as exc:
        raise ConfigError(f"{path} is not JSON: {exc}") from None
    return from_json(doc, str(path))
