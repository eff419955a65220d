"""Who may wave a failing results gate through: a label on the PR, or a maintainer's
`/ack-regression` comment. Pure; the CLI reads the labels, comments and permissions."""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from datetime import datetime

from infx.github.client import Comment
from infx.results.verdict import Ack
from infx.workflows.reuse import PREFILTER_ASSOCIATIONS, authorized

ACK_COMMAND = "/ack-regression"


def asks(comment: Comment) -> bool:
    """A line of the comment is the command alone (surrounding spaces aside)."""
    return any(line.strip() == ACK_COMMAND for line in comment.body.splitlines())


def _counted(comment: Comment, since: datetime | None) -> bool:
    return asks(comment) and (since is None or comment.created_at >= since)


def askers(comments: Iterable[Comment], since: datetime | None = None) -> set[str]:
    """Authors whose permission must be read: they wrote the command (after `since`) and
    pass the author_association pre-filter."""
    return {
        c.author for c in comments if _counted(c, since) and c.association in PREFILTER_ASSOCIATIONS
    }


def acknowledgement(
    labels: Sequence[str],
    comments: Iterable[Comment],
    permissions: Mapping[str, str],
    label: str | None,
    since: datetime | None = None,
) -> Ack | None:
    """The label wins; else the newest command posted since `since` (the sweep being
    judged started) by someone with write, maintain or admin permission (the collaborator
    permission API decides, as for /reuse-sweep-run). An older command acknowledged an
    older sweep."""
    if label and label in labels:
        return Ack("label", label)
    found = [c for c in comments if _counted(c, since) and authorized(c, permissions)]
    if not found:
        return None
    newest = max(found, key=lambda c: (c.created_at, c.id))
    return Ack("comment", newest.author)
