"""The I/O edge of `sweep plan` and `sweep mode`: the Actions event and the head commit's
message, the repository at the plan's refs (through `infx.matrix.sources`), the budgets
and runners.yaml's node sizes at the base, the job inputs an append-only diff edits
(`infx.matrix.inputs`), recorded job timings, and who set a PR's sweep labels (through the API:
GITHUB_TOKEN with pull-requests: read). What to read next is asked of the pure rules
in `infx.sweep.plan`; nothing is decided here.
"""

from __future__ import annotations

import json
import os
from collections.abc import Callable, Iterator, Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any

from infx import git
from infx.errors import InfxError, UsageError
from infx.github.actions import event
from infx.matrix.plan import is_append_only
from infx.matrix.rows import PlanDocument, read_plan
from infx.matrix.sources import node_gpus_at, plan_change
from infx.numbers import SQLITE_INTEGER_END, decimal
from infx.paths import outside_repository
from infx.settings import SETTINGS_FILES, Settings, committed
from infx.settings import load as load_settings
from infx.sweep.labels import SWEEP_LABELS
from infx.sweep.plan import (
    Authority,
    EventFacts,
    PlanFacts,
    PlanRequest,
    needs_authority,
    plan_start,
)
from infx.sweep.record import PINS_FILE

if TYPE_CHECKING:
    from infx.github.client import GitHub
    from infx.sweep.authority import SupersedeFacts


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
        start.decision.plan, request.strict, (*SETTINGS_FILES, request.runners_path),
    )  # fmt: skip
    manifest = None
    if request.manifest is not None:
        from infx.matrix.inputs import manifest_of  # digests every job input: only when asked

        options = start.decision.sweep_options(start.event_name)
        manifest = manifest_of(planned, options, settings.job_files)
    changed: list[str] = []  # what an append-only sweep's jobs run, edited by the diff
    if is_append_only(planned.result.plan.as_json()):
        from infx.matrix.inputs import changed_job_inputs

        changed = changed_job_inputs(planned, settings.job_files)
    budgets = committed(planned.change.base_files, base).budget  # read with the changelog
    durations = None
    if request.durations is not None:
        from infx.matrix.timings import parse_timings

        data = request.durations.read_bytes()
        durations = parse_timings(data, str(request.durations)).durations()
    authority = None
    if needs_authority(start):
        names = [settings.label(role) for role in SWEEP_LABELS]
        authority = read_authority(names, start.payload or {})
    run_id, sha = 0, ""
    if request.rerun_record is not None:
        run_id = _this_run()
        sha = git.git(["rev-parse", "HEAD"], root).strip()
    change = planned.change  # runners.yaml at the base was read with the changelog
    sizes = node_gpus_at(
        root, change.base_tree, change.at_base(request.runners_path), change.base_files
    )
    return PlanFacts(
        start, planned, budgets, durations, authority, manifest, run_id, sha, sizes, changed
    )


def _this_run() -> int:
    """GITHUB_RUN_ID, 0 when unset; a usage error when it is set but no run id the history
    can store (int() crashed on junk, and took `٣` and 2**63)."""
    text = os.environ.get("GITHUB_RUN_ID") or "0"
    number = decimal(text, below=SQLITE_INTEGER_END)
    if number is None:
        raise UsageError(f"GITHUB_RUN_ID must be a run id (digits), not {text!r}")
    return number


def read_authority(sweep_labels: list[str], payload: Mapping[str, Any]) -> Authority:
    """Who set the PR's sweep labels (its timeline, and this event) and the permission of
    each; a failed read is a fact too (the plan then waits for approval)."""
    from infx.context import repo_slug
    from infx.github.client import GitHub
    from infx.sweep.authority import LabelChange, actors, event_labels, hold

    number = (payload.get("pull_request") or {}).get("number")
    labels = event_labels(payload, sweep_labels)
    try:
        if not isinstance(number, int):
            raise UsageError("the event names no pull request")
        gh = GitHub(repo_slug(None))

        def fetch() -> tuple[list[LabelChange], dict[str, str]]:
            changes = [
                LabelChange(e.label, e.action, e.actor, e.created_at)
                for e in gh.label_events(number)
            ]
            return changes, {login: gh.permission(login) for login in actors(labels, changes)}

        changes, permissions = gh.decide(fetch)
    except InfxError as exc:
        return Authority(unread=str(exc))
    return Authority(hold(labels, changes, permissions))


def read_supersede(workflow: str, repo: str | None) -> tuple[GitHub, SupersedeFacts]:
    """The pull_request event, its sender's permission (a push needs none) and the
    workflow's runs on the PR's branch, through the client that may then cancel them."""
    from infx.context import repo_slug
    from infx.github.client import GitHub
    from infx.sweep.authority import SupersedeFacts, supersede_sender_checked

    name, payload = event()
    pr = payload.get("pull_request") or {}
    branch = str((pr.get("head") or {}).get("ref") or "")
    if name != "pull_request" or not branch:
        raise UsageError(f"`sweep supersede` reads a pull_request event, not {name or 'none'}")
    action = str(payload.get("action", ""))
    sender = str((payload.get("sender") or {}).get("login") or "")
    run_id = _this_run()
    if run_id <= 0:
        raise UsageError("GITHUB_RUN_ID names no run")
    gh = GitHub(repo_slug(repo))

    def fetch() -> SupersedeFacts:
        checked = supersede_sender_checked(action) and sender
        permission = gh.permission(sender) if checked else None
        runs = gh.branch_runs(workflow, branch)
        return SupersedeFacts(action, sender, permission, run_id, runs, gh.slug)

    return gh, gh.decide(fetch)


def cancel_superseded(workflow: str, repo: str | None) -> Iterator[str]:
    """`sweep supersede`: why the PR's older runs are (or are not) cancelled, then each one
    cancelled (GitHub's only write here)."""
    from infx.sweep.authority import superseded

    gh, facts = read_supersede(workflow, repo)
    why, older = superseded(facts)
    yield why
    for run_id in older:
        yield f"run {run_id}: {'cancelled' if gh.cancel_run(run_id) else 'already finished'}"


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


def read_workflows(root: Path, pattern: str) -> dict[str, str]:
    """The workflow files the glob `pattern` finds under `root`: path from it -> text."""
    if not pattern or outside_repository(pattern):
        raise UsageError(
            f"--workflows {pattern!r}: give a glob relative to the repository root, "
            "neither empty nor absolute nor through '..'"
        )
    files = sorted(path for path in root.glob(pattern) if path.is_file())
    return {
        path.relative_to(root).as_posix(): path.read_text(encoding="utf-8", errors="replace")
        for path in files
    }
