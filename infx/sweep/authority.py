"""Who may spend GPU-hours through a pull request's labels: a sweep's labels are trusted only
as far as the people who set them may push.

The triage role may add and remove labels (GitHub reports it as read); write, maintain and
admin may push, and so may start a sweep by pushing. A PR's sweep therefore runs without
a reviewer only when

- the event is not a sender's own say without write permission: a sweep or modifier label
  added or removed, or the PR marked ready for review, by someone who may push (a push,
  `synchronize`, is by someone who may push by construction);
- the PR's sweep labels as they stand were set by people who may push: each sweep label on
  the PR was last added by one (a label no timeline event names is trusted by no one), and
  each sweep label no longer on it, if last removed, was removed by one (removing
  `evals-only` or `agentx-fast` widens a sweep; removing one of two primary labels starts
  the other's).

Otherwise the plan waits for a reviewer of the `gpu-budget` environment, whatever the
`[budget]` table holds. An event whose sender may not push cancels no sweep either
(`superseded`). Pure: `infx.sweep.facts` reads what these functions take.
"""

from __future__ import annotations

from collections.abc import Collection, Iterable, Mapping, Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from infx.github.permissions import WRITE_PERMISSIONS

WRITE = frozenset(WRITE_PERMISSIONS)


def labeler_hold(label: str, adder: str | None, permission: str | None) -> str:
    """Why a sweep label's plan waits for approval because of who added the label ("": it
    need not). A sweep label trusts whoever may push; the triage role may label too (GitHub
    reports it as read), and a label no one is known to have added is trusted by no one."""
    if not adder:
        return f"label {label}: no one is known to have added it"
    if permission not in WRITE:
        return f"label {label} added by {adder}, who lacks write permission"
    return ""


LABEL_ACTIONS = ("labeled", "unlabeled")
# Events whose sender is checked: who may label, or mark a PR ready, need not be able to push.
SENDER_ACTIONS = (*LABEL_ACTIONS, "ready_for_review")
# Runs that have not finished, as the runs API reports them.
ACTIVE = frozenset({"queued", "in_progress", "waiting", "pending", "requested"})


@dataclass(frozen=True)
class LabelChange:
    """One label event of a PR's timeline (or the event at hand)."""

    label: str  # the repository's name
    action: str  # labeled | unlabeled
    actor: str  # "": GitHub names no one
    at: datetime | None = None


@dataclass(frozen=True)
class EventLabels:
    """What an event says about a PR's sweep labels, by the repository's names."""

    action: str
    sender: str
    label: str  # the label of a labeled/unlabeled event ("": none)
    present: tuple[str, ...]  # sweep labels on the PR
    sweep_labels: tuple[str, ...]  # every sweep label, primary first


def event_labels(payload: Mapping[str, Any], sweep_labels: Sequence[str]) -> EventLabels:
    """The sweep labels of a pull_request event's payload (`sweep_labels`: the repository's
    names of the sweep roles)."""
    pr = payload.get("pull_request") or {}
    names = [str(item.get("name", "")) for item in pr.get("labels", []) if isinstance(item, dict)]
    return EventLabels(
        action=str(payload.get("action", "")),
        sender=str((payload.get("sender") or {}).get("login") or ""),
        label=str((payload.get("label") or {}).get("name") or ""),
        present=tuple(name for name in sweep_labels if name in names),
        sweep_labels=tuple(sweep_labels),
    )


def last_changes(labels: EventLabels, timeline: Iterable[LabelChange]) -> dict[str, LabelChange]:
    """The newest change of each sweep label: the event's own for its label (the timeline
    may not list it yet), else the timeline's."""
    ordered = sorted(
        (c for c in timeline if c.action in LABEL_ACTIONS and c.label in labels.sweep_labels),
        key=lambda c: (c.at is None, c.at),
    )
    last = {change.label: change for change in ordered}
    if labels.action in LABEL_ACTIONS and labels.label in labels.sweep_labels and labels.sender:
        last[labels.label] = LabelChange(labels.label, labels.action, labels.sender)
    return last


def actors(labels: EventLabels, timeline: Iterable[LabelChange]) -> list[str]:
    """Whose permission the hold needs, in the order it asks (the sender first)."""
    wanted = [labels.sender] if labels.action in SENDER_ACTIONS and labels.sender else []
    for change in last_changes(labels, timeline).values():
        if change.actor and change.actor not in wanted:
            wanted.append(change.actor)
    return wanted


def hold(
    labels: EventLabels, timeline: Iterable[LabelChange], permissions: Mapping[str, str]
) -> str:
    """Why the PR's sweep waits for a reviewer because of who asked for it ("": it need not).
    `permissions`: login -> GitHub's permission, for each of `actors`."""
    changes = list(timeline)
    last = last_changes(labels, changes)
    if labels.action == "ready_for_review" and permissions.get(labels.sender) not in WRITE:
        return f"marked ready for review by {labels.sender or 'no one known'}, who lacks write permission"
    order = [labels.label] if labels.label in labels.sweep_labels else []
    order += [name for name in labels.sweep_labels if name not in order]
    for name in order:
        change = last.get(name)
        if name in labels.present:
            if change is None or change.action != "labeled":
                return labeler_hold(name, None, None)
            why = labeler_hold(name, change.actor or None, permissions.get(change.actor))
            if why:
                return why
        elif (
            change is not None
            and change.action == "unlabeled"
            and permissions.get(change.actor) not in WRITE
        ):
            who = change.actor or "no one known"
            return f"label {name} removed by {who}, who lacks write permission"
    return ""


# --- which older sweeps an event cancels ------------------------------------------------------


@dataclass(frozen=True)
class SupersedeFacts:
    """What `infx sweep supersede` reads: the event, its sender's permission and the
    workflow's runs on the PR's branch."""

    action: str
    sender: str
    permission: str | None  # None: not read (a push needs none)
    this_run: int
    runs: Sequence[Any]  # infx.github.values.Run
    repo: str


def supersede_sender_checked(action: str) -> bool:
    """A push needs write permission to happen at all; other events are checked."""
    return action != "synchronize"


def superseded(
    facts: SupersedeFacts, events: Collection[str] = ("pull_request", "workflow_dispatch")
) -> tuple[str, list[int]]:
    """Why, and which runs of the PR's branch this event cancels: its older unfinished sweep
    runs of this repository's commits, when its sender may push; none otherwise."""
    if supersede_sender_checked(facts.action) and facts.permission not in WRITE:
        who = facts.sender or "no one known"
        return f"{facts.action} by {who}, who lacks write permission: no sweep is cancelled", []
    older = sorted(
        run.id
        for run in facts.runs
        if run.status in ACTIVE
        and run.id < facts.this_run
        and run.head_repo == facts.repo
        and run.event in events
    )
    if not older:
        return f"{facts.action}: no older sweep of this branch is running", []
    return f"{facts.action} by {facts.sender or 'a push'}: cancelling the older sweeps", older
