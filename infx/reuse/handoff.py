"""Comment commands in two jobs: one reads the untrusted comment with a read-only token and
decides; a second job, holding the write permission, only carries the decision out.

The decision crosses between the jobs as job outputs. The acting job trusts none of it
blindly: the reaction must be +1 or -1, the comment is the event's own, and a dispatch must
be the staging event for the event's own pull request.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from typing import Any, TypedDict, cast

from infx.errors import UsageError
from infx.github.actions import CommentEvent, comment_event
from infx.github.client import Status
from infx.reuse.measured import STATUS_CONTEXT, STATUS_LENGTH

REACTIONS = ("+1", "-1")
STAGE_EVENT = "stage-results"
STATUS_STATES = ("success", "failure")


# What a staging dispatch says (the keys are the staging pipeline's, hyphens and all).
StagedArtifact = TypedDict("StagedArtifact", {"id": int, "name": str, "staged-as": str})
StagePayload = TypedDict(
    "StagePayload",
    {
        "pr-number": int,
        "run-id": int,
        "run-attempt": int,
        "requested-by": str,
        "artifacts": list[StagedArtifact],
    },
)


@dataclass(frozen=True)
class Dispatch:
    """A repository dispatch: only ever the staging event, for one PR."""

    event_type: str
    payload: StagePayload


@dataclass(frozen=True)
class StatusDecision:
    """The `infx/reuse` commit status decided for a PR head."""

    sha: str
    status: Status


@dataclass(frozen=True)
class Decision:
    """What a comment command decided to do, in this order: dispatch, react, set a status."""

    reaction: str | None = None  # "+1", "-1" or None (nothing to react)
    dispatch: Dispatch | None = None
    status: StatusDecision | None = None

    def outputs(self) -> dict[str, str]:
        """The deciding job's step outputs, which `infx apply-decision` is handed; an empty
        reaction means: nothing to do."""
        dispatch = status = ""
        if self.dispatch is not None:
            sent = {"event_type": self.dispatch.event_type, "client_payload": self.dispatch.payload}
            dispatch = json.dumps(sent, separators=(",", ":"))
        if self.status is not None:
            decided = self.status.status
            fields = {
                "sha": self.status.sha,
                "state": decided.state,
                "description": decided.description,
            }
            status = json.dumps(fields, separators=(",", ":"))
        return {"reaction": self.reaction or "", "dispatch": dispatch, "status": status}


@dataclass(frozen=True)
class CommentOutcome:
    """A comment command's answer: its decision, the step summary, the lines it prints."""

    decision: Decision
    summary: str  # Markdown, data escaped
    lines: tuple[str, ...]


def received_comment(
    name: str, payload: dict[str, Any], actions: tuple[str, ...]
) -> tuple[CommentEvent | None, str]:
    """The issue_comment event if its action is one of `actions`, else None and why not."""
    if name != "issue_comment" or payload.get("action") not in actions:
        action = payload.get("action", "")
        return None, f"ignored: {name} {action} is not a comment {' or '.join(actions)}"
    return comment_event(payload), ""


def handed_on(
    name: str, payload: dict[str, Any], reaction: str, dispatch: str, status: str
) -> tuple[CommentEvent, Decision]:
    """The comment and the decision `infx apply-decision` was handed, both checked."""
    if name != "issue_comment":
        raise UsageError("apply-decision runs on an issue_comment event")
    received = comment_event(payload)
    decided, to_dispatch = parse_decision(reaction, dispatch, received.issue_number)
    return received, Decision(decided, to_dispatch, parse_status(status))


def status_update(decided: StatusDecision, current: Status | None) -> tuple[bool, str]:
    """Whether to set the decided status (not when the head carries exactly it already), and
    what to say about it."""
    where = f"{STATUS_CONTEXT} on {decided.sha[:12]}"
    if current == decided.status:
        return False, f"{where} already says: {decided.status.description}"
    return True, f"{where}: {decided.status.description}"


def head_moved(decided: StatusDecision, head: str, number: int) -> str | None:
    """Why a handed-on status is left unset (None: its commit is still the PR's head)."""
    if head != decided.sha:
        return f"PR #{number}'s head moved to {head[:12]}; status left"
    return None


def _is_int(value: object) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)


def _stage_payload_problem(payload: object, pr_number: int) -> str | None:
    if not isinstance(payload, dict):
        return "client_payload is not an object"
    expected = {"pr-number", "run-id", "run-attempt", "requested-by", "artifacts"}
    if set(payload) != expected:
        return f"client_payload keys must be {', '.join(sorted(expected))}"
    if payload["pr-number"] != pr_number:
        return f"client_payload is for PR {payload['pr-number']!r}, the comment is on #{pr_number}"
    if not (_is_int(payload["run-id"]) and _is_int(payload["run-attempt"])):
        return "run-id and run-attempt must be integers"
    if not isinstance(payload["requested-by"], str):
        return "requested-by must be a login"
    artifacts = payload["artifacts"]
    if not isinstance(artifacts, list) or not all(
        isinstance(a, dict)
        and set(a) == {"id", "name", "staged-as"}
        and _is_int(a["id"])
        and isinstance(a["name"], str)
        and isinstance(a["staged-as"], str)
        for a in artifacts
    ):
        return "artifacts must be a list of {id, name, staged-as}"
    return None


def parse_decision(
    reaction: str, dispatch: str, pr_number: int
) -> tuple[str | None, Dispatch | None]:
    """The acting job's view of the outputs it was handed; anything unexpected is refused."""
    if reaction and reaction not in REACTIONS:
        raise UsageError(
            f"reaction must be one of {', '.join(REACTIONS)} or empty, not {reaction!r}"
        )
    if not dispatch:
        return reaction or None, None
    if reaction != "+1":
        raise UsageError("a dispatch comes only with an accepted (+1) command")
    try:
        data = json.loads(dispatch)
    except json.JSONDecodeError as exc:
        raise UsageError(f"dispatch is not JSON: {exc.msg}") from None
    if not isinstance(data, dict) or set(data) != {"event_type", "client_payload"}:
        raise UsageError("dispatch must be {event_type, client_payload}")
    if data["event_type"] != STAGE_EVENT:
        raise UsageError(f"only the {STAGE_EVENT!r} event may be dispatched")
    problem = _stage_payload_problem(data["client_payload"], pr_number)
    if problem:
        raise UsageError(f"dispatch refused: {problem}")
    return reaction, Dispatch(data["event_type"], cast(StagePayload, data["client_payload"]))


def parse_status(status: str) -> StatusDecision | None:
    """The acting job's view of a decided `infx/reuse` status; anything unexpected is refused.
    The context is always infx's own: a decision cannot name another check."""
    if not status:
        return None
    try:
        data = json.loads(status)
    except json.JSONDecodeError as exc:
        raise UsageError(f"status is not JSON: {exc.msg}") from None
    if not isinstance(data, dict) or set(data) != {"sha", "state", "description"}:
        raise UsageError("status must be {sha, state, description}")
    if not isinstance(data["sha"], str) or not re.fullmatch(r"[0-9a-f]{40}", data["sha"]):
        raise UsageError("status sha must be a commit id")
    if data["state"] not in STATUS_STATES:
        raise UsageError(f"status state must be one of {', '.join(STATUS_STATES)}")
    text = data["description"]
    if not isinstance(text, str) or not 0 < len(text) <= STATUS_LENGTH:
        raise UsageError(f"status description must be 1 to {STATUS_LENGTH} characters")
    return StatusDecision(data["sha"], Status(STATUS_CONTEXT, data["state"], text))
