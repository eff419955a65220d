"""`/stage-results [<run_id>]`: hand a PR's sweep results to the staging pipeline."""

from __future__ import annotations

from dataclasses import dataclass, field

from infx.github.client import Artifact, GitHub, Run
from infx.workflows.commands import STAGE_USAGE, mentions_stage, stage_command
from infx.workflows.reuse import (
    FULL_SWEEP_LABELS,
    WRITE_PERMISSIONS,
    check_run,
    label_active_at,
    result_artifacts,
)

DISPATCH_EVENT = "stage-results"
METADATA_ARTIFACT = "changelog-metadata"


@dataclass
class StageResult:
    reaction: str | None
    reason: str
    run: Run | None = None
    staged: dict[str, str] = field(default_factory=dict)  # artifact -> staged name


def staged_name(pr: int, run_id: int, artifact: str) -> str:
    return f"pr{pr}-run{run_id}-{artifact}"


def _stageable(
    gh: GitHub,
    run: Run,
    commits: set[str],
    workflow: str,
    events: list,
) -> tuple[str | None, list[Artifact]]:
    why = check_run(run, commits, workflow, pinned=True)
    if why:
        return why, []
    if not label_active_at(events, FULL_SWEEP_LABELS, run.created_at):
        return f"run {run.id} started without a full-sweep label on the PR", []
    artifacts = gh.artifacts(run.id)
    metadata = [a for a in artifacts if a.name == METADATA_ARTIFACT and not a.expired]
    results = result_artifacts(artifacts)
    if not metadata or not results:
        return f"run {run.id} lacks unexpired {METADATA_ARTIFACT} and result artifacts", []
    return None, metadata + results


def stage(gh: GitHub, payload: dict, workflow: str) -> StageResult:
    issue = payload.get("issue") or {}
    event_comment = payload.get("comment") or {}
    body = event_comment.get("body", "")
    if not mentions_stage(body):
        return StageResult(None, "comment is not a /stage-results command")
    if not issue.get("pull_request"):
        return StageResult(None, "comment is on an issue, not a pull request")
    valid, run_id = stage_command(body)
    if not valid:
        return StageResult("-1", STAGE_USAGE)
    comment = gh.comment(int(event_comment["id"]))
    # The requester is the comment's author, never whoever re-runs the job.
    if gh.permission(comment.author) not in WRITE_PERMISSIONS:
        return StageResult("-1", f"{comment.author} lacks write, maintain or admin permission")
    number = int(issue["number"])
    pull = gh.pull(number)
    if not any(label in FULL_SWEEP_LABELS for label in pull.labels):
        return StageResult("-1", f"PR #{number} has no full-sweep label")
    commits = set(gh.pull_commits(number))
    events = gh.label_events(number)
    if run_id is not None:
        run = gh.run(run_id)
        why, artifacts = _stageable(gh, run, commits, workflow, events)
        if why:
            return StageResult("-1", why, run)
    else:
        run, artifacts, why = None, [], "no run found"
        for candidate in gh.runs(workflow, pull.head_ref):
            why, artifacts = _stageable(gh, candidate, commits, workflow, events)
            if why is None:
                run = candidate
                break
        if run is None:
            return StageResult("-1", f"no stageable {workflow} run on PR #{number}")
    staged = {a.name: staged_name(number, run.id, a.name) for a in artifacts}
    gh.dispatch(
        DISPATCH_EVENT,
        {
            "pr-number": number,
            "run-id": run.id,
            "run-attempt": run.run_attempt,
            "requested-by": comment.author,
            "artifacts": [
                {"id": a.id, "name": a.name, "staged-as": staged[a.name]} for a in artifacts
            ],
        },
    )
    return StageResult("+1", f"staged {len(staged)} artifact(s) of run {run.id}", run, staged)
