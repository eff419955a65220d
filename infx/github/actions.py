"""Read what GitHub Actions hands a step (event payload) and write what it takes back (outputs)."""

from __future__ import annotations

import json
import os
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from infx.errors import UsageError


@dataclass(frozen=True)
class CommentEvent:
    """An issue_comment event, as read from its payload at the edge."""

    issue_number: int
    on_pull_request: bool
    comment_id: int
    body: str
    updated_at: str  # as the payload spells it, compared with the API's current value


def event() -> tuple[str, dict[str, Any]]:
    """GITHUB_EVENT_NAME and the parsed GITHUB_EVENT_PATH payload."""
    name = os.environ.get("GITHUB_EVENT_NAME")
    path = os.environ.get("GITHUB_EVENT_PATH")
    if not name or not path:
        raise UsageError(
            "GITHUB_EVENT_NAME and GITHUB_EVENT_PATH must be set (run inside GitHub Actions)"
        )
    try:
        payload = json.loads(Path(path).read_text(encoding="utf-8"))
    except (OSError, ValueError) as exc:  # ValueError: not JSON, or not UTF-8
        raise UsageError(f"cannot read the event payload {path}: {exc}") from None
    if not isinstance(payload, dict):
        raise UsageError(f"the event payload {path} is not a JSON object")
    return name, payload


def comment_event(payload: dict[str, Any]) -> CommentEvent:
    """The issue_comment payload as a value; a payload of another shape is a usage error."""
    issue, comment = payload.get("issue"), payload.get("comment")
    if not isinstance(issue, dict) or not isinstance(comment, dict):
        raise UsageError("the issue_comment payload lacks 'issue' or 'comment'")
    number, comment_id = issue.get("number"), comment.get("id")
    body, updated = comment.get("body"), comment.get("updated_at")
    if type(number) is not int or type(comment_id) is not int:
        raise UsageError("the issue_comment payload lacks a numeric issue.number or comment.id")
    if not isinstance(body, str | None) or not isinstance(updated, str | None):
        raise UsageError("the issue_comment payload's comment.body or updated_at is not text")
    return CommentEvent(
        issue_number=number,
        on_pull_request=bool(issue.get("pull_request")),
        comment_id=comment_id,
        body=body or "",
        updated_at=updated or "",
    )


def set_outputs(values: dict[str, str]) -> None:
    """Append step outputs to GITHUB_OUTPUT, using a heredoc delimiter so values may span lines."""
    target = os.environ.get("GITHUB_OUTPUT")
    if not target:
        return
    with open(target, "a", encoding="utf-8") as fh:
        for key, value in values.items():
            delimiter = f"infx_{os.urandom(16).hex()}"
            fh.write(f"{key}<<{delimiter}\n{value}\n{delimiter}\n")


def summary_wanted() -> bool:
    """Whether a job summary is written here (GITHUB_STEP_SUMMARY names its file): a text
    only the summary shows need not be made otherwise."""
    return bool(os.environ.get("GITHUB_STEP_SUMMARY"))


def append_summary(markdown: str) -> None:
    target = os.environ.get("GITHUB_STEP_SUMMARY")
    if target:
        with open(target, "a", encoding="utf-8") as fh:
            fh.write(markdown)
