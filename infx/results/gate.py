"""Who may wave a failing results gate through: a label on the PR, or a maintainer's
`/ack-regression` comment. Pure; the CLI reads the labels, comments and permissions."""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from datetime import datetime

from infx.github.client import Comment
from infx.github.permissions import PREFILTER_ASSOCIATIONS, authorized
from infx.results.report import Ack

ACK_COMMAND = "/ack-regression"
_SHOWN = re.compile(r"^<!-- infx:run (\d+)(?: ack (\d+))? -->$", re.MULTILINE)


@dataclass(frozen=True)
class Shown:
    """What the sticky comment showed when a maintainer could read it: an acknowledgement
    is for the verdict on screen, so it counts when posted after the comment began showing
    this run's verdict (`since`: its last edit), or when that comment already names it as
    this run's acknowledgement (a re-run of the job after it passed)."""

    since: datetime | None  # None: the comment does not show this run's verdict yet
    ack: int | None = None


def shown(sticky: Comment | None, run_id: int) -> Shown:
    """Read the run (and acknowledging comment) the sticky comment's hidden line names."""
    found = _SHOWN.search(sticky.body) if sticky is not None else None
    if sticky is None or found is None or int(found[1]) != run_id:
        return Shown(None)
    return Shown(sticky.updated_at, int(found[2]) if found[2] else None)


def shown_line(run_id: int, ack: int | None) -> str:
    return f"<!-- infx:run {run_id}" + (f" ack {ack}" if ack is not None else "") + " -->"


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
    seen: Shown | None = None,
) -> Ack | None:
    """The label wins; else the newest command posted since `since` (the sweep being
    judged started) by someone with write, maintain or admin permission (the collaborator
    permission API decides, as for /reuse-sweep-run). An older command acknowledged an
    older sweep. With `seen` (inside Actions), the command must also answer this run's
    verdict as the sticky comment showed it: a command posted while the comment still
    showed another run's verdict (an earlier push) acknowledged that one."""
    if label and label in labels:
        return Ack("label", label)
    found = [c for c in comments if _counted(c, since) and authorized(c, permissions)]
    if seen is not None:
        found = [
            c
            for c in found
            if c.id == seen.ack or (seen.since is not None and c.created_at > seen.since)
        ]
    if not found:
        return None
    newest = max(found, key=lambda c: (c.created_at, c.id))
    return Ack("comment", newest.author, comment_id=newest.id)
