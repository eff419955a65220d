"""Who may wave a failing results gate through: a label on the PR, or a maintainer's
`/ack-regression` comment. Pure; the CLI reads the labels, comments and permissions."""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence

from infx.github.client import Comment
from infx.results.verdict import Ack
from infx.workflows.reuse import PREFILTER_ASSOCIATIONS, authorized

ACK_COMMAND = "/ack-regression"


def asks(comment: Comment) -> bool:
    """A line of the comment is the command alone (surrounding spaces aside)."""
    return any(line.strip() == ACK_COMMAND for line in comment.body.splitlines())


def askers(comments: Iterable[Comment]) -> set[str]:
    """Authors whose permission must be read: they wrote the command and pass the
    author_association pre-filter."""
    return {c.author for c in comments if asks(c) and c.association in PREFILTER_ASSOCIATIONS}


def acknowledgement(
    labels: Sequence[str],
    comments: Iterable[Comment],
    permissions: Mapping[str, str],
    label: str | None,
) -> Ack | None:
    """The label wins; else the newest command by someone with write, maintain or admin
    permission (the collaborator permission API decides, as for /reuse-sweep-run)."""
    if label and label in labels:
        return Ack("label", label)
    found = [c for c in comments if asks(c) and authorized(c, permissions)]
    if not found:
        return None
    newest = max(found, key=lambda c: (c.created_at, c.id))
    return Ack("comment", newest.author)
