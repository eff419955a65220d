"""The I/O edge of `sweep plan` and `sweep mode`: the Actions event and the head commit's
message, the repository at the plan's refs (through `infx.matrix.sources`), the budgets
at the base, recorded job timings, and who added a PR's budgeted sweep label (through the
API: GITHUB_TOKEN with pull-requests: read). What to read next is asked of the pure rules
in `infx.sweep.plan`; nothing is decided here.
"""

from __future__ import annotations

import json
import os
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any

from infx import git
from infx.errors import InfxError, UsageError
from infx.github.actions import event
from infx.matrix.rows import PlanDocument, read_plan
from infx.matrix.sources import manifest_of, plan_change
from infx.matrix.timings import parse_timings
from infx.settings import Settings, load_at
from infx.settings import load as load_settings
from infx.sweep.plan import (
    EventFacts,
    Labeler,
    PlanFacts,
    PlanRequest,
    event_adder,
    last_adder,
    needs_labeler,
    plan_start,
)
from infx.sweep.record import PINS_FILE


def read_event(root: Path, settings: Settings | None = None) -> EventFacts:
    """GITHUB_EVENT_NAME and its payload, the PR head's commit message and [labels]."""
    name, payload = event()
    head_sha = ((payload.get("pull_request") or {}).get("head") or {}).get("sha")
    renamed = (settings or load_settings(root)).labels
    return EventFacts(name, payload, _head_message(head_sha), renamed)


def _head_message(sha: str | None) -> str:
    if not sha:
        return ""
    try:
        return git.git(["log", "-1", "--format=%B", sha])
    except InfxError:
        return ""


def read_plan_facts(
    root: Path, request: PlanRequest, default_base: Callable[[Path], str]
) -> PlanFacts:
    """Everything `plan_outcome` takes, read in the order the plan needs it."""
    settings = load_settings(root)
    start = plan_start(request, read_event(root, settings) if request.from_event else None)
    if not start.decision.run:
        return PlanFacts(start)
    base = start.base if start.base is not None else default_base(root)
    planned = plan_change(
        root, base, start.head, request.path, request.config_globs, request.runners_path,
        start.decision.plan, request.strict,
    )  # fmt: skip
    manifest = None
    if request.manifest is not None:
        options = start.decision.sweep_options(start.event_name)
        manifest = manifest_of(planned, options, settings.job_files)
    budgets = load_at(root, base).budget
    durations = None
    if request.durations is not None:
        data = request.durations.read_bytes()
        durations = parse_timings(data, str(request.durations)).durations()
    labeler = None
    if needs_labeler(start, budgets):
        labeler = read_labeler(settings.label(start.decision.label), start.payload or {})
    run_id, sha = 0, ""
    if request.rerun_record is not None:
        run_id = int(os.environ.get("GITHUB_RUN_ID", "0") or 0)
        sha = git.git(["rev-parse", "HEAD"], root).strip()
    return PlanFacts(start, planned, budgets, durations, labeler, manifest, run_id, sha)


def read_labeler(label: str, payload: Mapping[str, Any]) -> Labeler:
    """Who last added the PR's `label` and their permission; a failed read is a fact too
    (the plan then waits for approval)."""
    from infx.context import repo_slug
    from infx.github.client import GitHub

    number = (payload.get("pull_request") or {}).get("number")
    try:
        if not isinstance(number, int):
            raise UsageError("the event names no pull request")
        gh = GitHub(repo_slug(None))

        def fetch() -> tuple[str | None, str | None]:
            adder = event_adder(payload, label) or last_adder(gh.label_events(number), label)
            return adder, gh.permission(adder) if adder else None

        adder, permission = gh.decide(fetch)
    except InfxError as exc:
        return Labeler(label, unread=str(exc))
    return Labeler(label, adder, permission)


def read_plan_file(path: Path) -> PlanDocument:
    """A plan file (or canary split) as `sweep plan` wrote it, checked against its schema."""
    return read_plan(path.read_bytes(), str(path))


def read_origins(plan_path: Path) -> dict[str, str]:
    """Row signature -> master config, from the config-keys.json beside a plan (none, or a
    file infx cannot read: the rows' results name no config and are told apart by image)."""
    from infx.matrix import origins

    path = plan_path.parent / origins.FILE
    if not path.is_file():
        return {}
    try:
        found = origins.read(json.loads(path.read_bytes()))
    except (json.JSONDecodeError, UnicodeDecodeError) as exc:
        raise UsageError(f"{path} is not JSON: {exc}") from None
    if found is None:
        raise UsageError(f"{path} is not a map of plan rows to master configs")
    return found


def read_pins(plan_path: Path) -> dict[str, str]:
    """Row id -> node, from the runs-on.json beside a plan (none: every row runs on its label)."""
    path = plan_path.parent / PINS_FILE
    if not path.is_file():
        return {}
    try:
        pins = json.loads(path.read_bytes())
    except (json.JSONDecodeError, UnicodeDecodeError) as exc:
        raise UsageError(f"{path} is not JSON: {exc}") from None
    if not isinstance(pins, dict) or not all(isinstance(v, str) for v in pins.values()):
        raise UsageError(f"{path} is not a map of rows to runner nodes")
    return pins
