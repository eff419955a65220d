"""Who may wave a failing results gate through, and for which verdict: the PR label or a
maintainer's `/ack-regression` comment, bound to the verdict the maintainer saw. Pure; the
edge (`infx.results.compare.facts`) reads the labels, their events, comments and permissions.

A failing verdict has a **digest**: the PR head, and per failing config its verdict and, per
regressed metric, how far its worst point moved (in steps: under 5 %, 10, 20, 30, 50 %,
beyond). The sticky comment shows it, with the time it began
showing it. An acknowledgement counts only when given after that time by someone with
write, maintain or admin permission: a label (its newest `labeled` event decides who and
when; triage can add labels, so the label alone proves nothing) or a comment. A new push,
another failing point or a regression that grew past its step is another digest, which
nobody has acknowledged yet: the comment says so.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import datetime
from typing import TYPE_CHECKING

from infx.digest import hexdigest
from infx.github.permissions import PREFILTER_ASSOCIATIONS, WRITE_PERMISSIONS, authorized
from infx.markdown import Md, code, text
from infx.results.verdict.report import Ack, Report
from infx.results.verdict.words import COVERAGE_LOST, REGRESSED

if TYPE_CHECKING:
    from infx.github.values import Comment, LabelEvent

ACK_COMMAND = "/ack-regression"
_VERDICT = re.compile(r"^<!-- infx:verdict ([0-9a-f]{16})(?: since (\S+))? -->$", re.MULTILINE)
_SINCE = re.compile(r"(?<=^<!-- infx:verdict [0-9a-f]{16}) since \S+(?= -->$)", re.MULTILINE)
# How far a regressed check moved, in steps: a regression that grows past its step is a
# worse verdict, which the acknowledgement of the smaller one does not cover.
STEPS = (5.0, 10.0, 20.0, 30.0, 50.0)
_FAILING = (REGRESSED, COVERAGE_LOST)
_REFUSALS = 3  # acknowledgements that did not count, named in the comment


def _step(change: float | None) -> int:
    size = abs(change or 0.0)
    return sum(1 for edge in STEPS if size > edge)


def verdict_digest(report: Report, head: str) -> str:
    """What an acknowledgement answers: the head, and each failing config with its verdict
    and, per regressed metric (and curve measure), how far its worst point moved (in
    STEPS). Points that flip between regressed and within noise inside a failing config
    change nothing; another failing config, or a regression grown past its step, does."""
    failing = []
    for config in sorted(report.configs, key=lambda c: c.key):
        if config.verdict not in _FAILING:
            continue
        worst: dict[str, int] = {}
        moved = [
            (c.metric.key, c.change_pct)
            for p in config.points
            for c in p.checks
            if c.verdict == REGRESSED
        ]
        moved += [
            (name, m.change_pct)
            for name, m in (("curve", config.curve), ("level", config.level))
            if m and m.verdict == REGRESSED
        ]
        for name, change in moved:
            worst[name] = max(worst.get(name, 0), _step(change))
        failing.append([config.key, config.verdict, sorted(worst.items())])
    return hexdigest([head, failing])[:16]


def _time(text: str) -> datetime | None:
    try:
        return datetime.fromisoformat(text.replace("Z", "+00:00"))
    except ValueError:
        return None


def shown_since(sticky: Comment | None, digest: str) -> datetime | None:
    """When the sticky comment began showing this verdict (the time its hidden line carries
    from the edit that first showed it, else its last edit); None when it shows another
    verdict or none: nobody has seen this one yet."""
    found = _VERDICT.search(sticky.body) if sticky is not None else None
    if sticky is None or found is None or found[1] != digest:
        return None
    carried = _time(found[2]) if found[2] else None
    return carried if carried is not None else sticky.updated_at


def verdict_line(digest: str, since: datetime | None) -> Md:
    """The sticky comment's hidden line: the verdict it shows, and since when (None: since
    the edit that writes it, which GitHub's `updated_at` records)."""
    when = f" since {since.isoformat().replace('+00:00', 'Z')}" if since is not None else ""
    return Md(f"<!-- infx:verdict {digest}{when} -->")


def same_comment(old: str, new: str) -> bool:
    """Whether editing the sticky comment from `old` to `new` changes what it shows: not
    when only the time its verdict has been shown since was written down (an edit would
    move GitHub's `updated_at`, which that time is otherwise read from)."""
    return _SINCE.sub("", old) == _SINCE.sub("", new)


def shown_line(run_id: int, ack: int | None) -> str:
    return f"<!-- infx:run {run_id}" + (f" ack {ack}" if ack is not None else "") + " -->"


def asks(comment: Comment) -> bool:
    """A line of the comment is the command alone (surrounding spaces aside)."""
    return any(line.strip() == ACK_COMMAND for line in comment.body.splitlines())


def askers(comments: Iterable[Comment], since: datetime | None) -> set[str]:
    """Authors whose permission must be read: they wrote the command after `since` and pass
    the author_association pre-filter. None: nothing can count yet."""
    if since is None:
        return set()
    return {
        c.author
        for c in comments
        if asks(c) and c.created_at > since and c.association in PREFILTER_ASSOCIATIONS
    }


def label_adders(
    labels: Sequence[str], events: Iterable[LabelEvent], label: str | None
) -> list[LabelEvent]:
    """The `labeled` events of the acknowledge label, oldest first, while it is on the PR."""
    if not label or label not in labels:
        return []
    found = [e for e in events if e.action == "labeled" and e.label == label]
    return sorted(found, key=lambda e: e.created_at)


def is_bot(login: str) -> bool:
    """An app or bot account: no person's permission stands behind it."""
    return login.endswith("[bot]") or not login


@dataclass(frozen=True)
class Acknowledgement:
    """What the acknowledgements on a PR say about one failing verdict: the one that counts
    (None: none does), the verdict's digest and since when the comment shows it, and why
    the others do not count (for the comment)."""

    ack: Ack | None
    digest: str
    since: datetime | None
    refused: tuple[Md, ...] = field(default_factory=tuple)


def acknowledgement(
    digest: str,
    since: datetime | None,
    labels: Sequence[str],
    events: Sequence[LabelEvent],
    comments: Sequence[Comment],
    permissions: Mapping[str, str],
    label: str | None,
) -> Acknowledgement:
    """The newest acknowledgement given after the sticky comment began showing this verdict
    (`since`) by someone with write, maintain or admin permission (the collaborator
    permission API decides, as for /reuse-sweep-run): the label, by its newest `labeled`
    event, or an /ack-regression comment. Before `since`, or by anyone else, it counts not."""
    refused: list[Md] = []
    candidates: list[tuple[datetime, int, Ack]] = []
    added = label_adders(labels, events, label)
    if added:
        newest = added[-1]
        if since is None or newest.created_at <= since:
            refused.append(
                Md(
                    f"the label {code(label)} was added before this verdict was shown: it "
                    "answers an earlier one; remove it and add it again to acknowledge this one"
                )
            )
        elif is_bot(newest.actor) or permissions.get(newest.actor) not in WRITE_PERMISSIONS:
            who = text(newest.actor) if newest.actor else "someone GitHub does not name"
            refused.append(
                Md(
                    f"the label {code(label)} was added by {who}, who may not acknowledge a "
                    "regression (write, maintain or admin permission)"
                )
            )
        else:
            ack = Ack("label", newest.actor, at=newest.created_at)
            candidates.append((newest.created_at, 0, ack))
    for c in comments:
        if not asks(c) or since is None or c.created_at <= since:
            continue
        if authorized(c, permissions):
            ack = Ack("comment", c.author, comment_id=c.id, at=c.created_at)
            candidates.append((c.created_at, c.id, ack))
        else:
            refused.append(
                Md(f"{code(ACK_COMMAND)} by {text(c.author)}, who may not acknowledge a regression")
            )
    if (
        since is not None
        and not candidates
        and any(asks(c) and c.created_at <= since for c in comments)
    ):
        refused.append(
            Md(
                f"{code(ACK_COMMAND)} was posted before this verdict was shown: it answers "
                "an earlier one"
            )
        )
    chosen = max(candidates, key=lambda item: (item[0], item[1]))[2] if candidates else None
    return Acknowledgement(chosen, digest, since, tuple(dict.fromkeys(refused)))


def ack_note(found: Acknowledgement, label: str | None) -> Md:
    """What the comment says about acknowledging this verdict (Markdown, data escaped)."""
    how = f"add the label {code(label)} or comment" if label else "comment"
    said = [
        f"This verdict is {code(found.digest)}. An acknowledgement answers it alone: {how} "
        f"{code(ACK_COMMAND)} (write access) after this comment shows it, then re-run this "
        "job; a new push, another failing point or a regression that grew needs a new one."
    ]
    said += [f"Not counted: {why}." for why in found.refused[:_REFUSALS]]
    if len(found.refused) > _REFUSALS:
        said.append(f"({len(found.refused) - _REFUSALS} more not counted.)")
    return Md(" ".join(said))
