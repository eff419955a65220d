"""What a PR's labels ask the sweep workflow to do.

Exactly one primary label picks the sweep shape; modifiers adjust it. The
decision is pure data so the workflow's gating can be tested for every
combination of event, action, labels, draft and fork.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import asdict, dataclass, field
from typing import Any

from infx.errors import LabelError
from infx.matrix.manifest import SweepOptions
from infx.matrix.options import PlanOptions


@dataclass(frozen=True)
class Shape:
    trim_conc: bool
    canary: bool
    fail_fast: bool
    reusable: bool


PRIMARY: dict[str, Shape] = {
    "sweep-enabled": Shape(trim_conc=True, canary=False, fail_fast=False, reusable=False),
    "full-sweep-fail-fast": Shape(trim_conc=False, canary=True, fail_fast=True, reusable=True),
    "full-sweep-enabled": Shape(trim_conc=False, canary=True, fail_fast=False, reusable=True),
    "full-sweep-fail-fast-no-canary": Shape(
        trim_conc=False, canary=False, fail_fast=True, reusable=True
    ),
    "non-canary-full-sweep-enabled": Shape(
        trim_conc=False, canary=False, fail_fast=False, reusable=True
    ),
}
MODIFIERS = ("all-evals", "evals-only", "agentx-fast", "skip_queue")
SWEEP_LABELS = (*PRIMARY, *MODIFIERS)
SKIP_MARKER = "[skip-sweep]"


@dataclass(frozen=True)
class Decision:
    """Whether this workflow run sweeps, and how. The planner's part is `plan`; the rest is
    the workflow's (canary first, fail fast, AgentX fast profile) or the reuse gate's."""

    run: bool
    reason: str
    label: str = ""
    plan: PlanOptions = field(default_factory=PlanOptions)
    canary: bool = False
    fail_fast: bool = False
    agentx_fast: bool = False
    reusable: bool = False

    def sweep_options(self, event: str) -> SweepOptions:
        """The options a sweep of this decision runs with, as its manifest records them."""
        return SweepOptions(
            event=event,
            label=self.label,
            trim_conc=self.plan.trim_conc,
            all_evals=self.plan.all_evals,
            evals_only=self.plan.evals_only,
            agentx_fast=self.agentx_fast,
            reusable=self.reusable,
        )

    def outputs(self) -> dict[str, str]:
        """Step outputs, one per flag (the plan's flags flattened in)."""
        values = {k: v for k, v in asdict(self).items() if k != "plan"}
        values.update(asdict(self.plan))
        return {
            k.replace("_", "-"): (str(v).lower() if isinstance(v, bool) else str(v))
            for k, v in values.items()
        }


def decide(
    event_name: str,
    action: str,
    labels: list[str],
    event_label: str = "",
    draft: bool = False,
    fork: bool = False,
    head_message: str = "",
    closed: bool = False,
) -> Decision:
    """The sweep a workflow run should perform (run=False: nothing but this decision).

    Labels are the roles' names (see `canonical_labels` for a repository that renames
    them). agentx-fast, as in InferenceX, keeps every row and runs the agentic ones with
    the fast AgentX profile; its results are not a full sweep, so they are not reusable."""
    if event_name == "push":
        return Decision(True, "push to main: full sweep with canary", canary=True, reusable=True)
    if event_name != "pull_request":
        return Decision(False, f"event {event_name} does not run sweeps")
    if draft:
        return Decision(False, "draft pull requests never reach the GPU runners")
    if fork:
        return Decision(False, "pull requests from forks never reach the self-hosted runners")
    if closed:
        return Decision(False, "the pull request is closed: its labels start no sweep")
    if action in ("labeled", "unlabeled") and event_label not in SWEEP_LABELS:
        return Decision(False, f"label {event_label!r} does not concern sweeps")
    primaries = sorted(label for label in labels if label in PRIMARY)
    if len(primaries) > 1:
        raise LabelError(
            f"more than one sweep label on this PR ({', '.join(primaries)}); keep exactly one"
        )
    if not primaries:
        return Decision(False, "no sweep label on this PR")
    if SKIP_MARKER in head_message:
        return Decision(False, f"head commit message contains {SKIP_MARKER}")
    label = primaries[0]
    shape = PRIMARY[label]
    evals_only = "evals-only" in labels
    return Decision(
        True,
        f"label {label}",
        label,
        PlanOptions(shape.trim_conc, "all-evals" in labels, evals_only),
        canary=shape.canary and not evals_only,
        fail_fast=shape.fail_fast,
        agentx_fast="agentx-fast" in labels,
        reusable=shape.reusable and not any(m in labels for m in NOT_REUSABLE),
    )


def canonical_labels(names: list[str], renamed: Mapping[str, str]) -> list[str]:
    """A repository's label names as the roles infx knows (`[labels]` in infx.toml maps
    role -> the repository's name)."""
    roles = {name: role for role, name in renamed.items()}
    return [roles.get(name, name) for name in names]


def decide_event(
    event_name: str,
    payload: Mapping[str, Any],
    head_message: str = "",
    renamed: Mapping[str, str] | None = None,
) -> Decision:
    """`decide` on a GitHub Actions event payload: labels, the label event, draft, fork."""
    pr = payload.get("pull_request") or {}
    labels = pr.get("labels") or []
    names = [label.get("name", "") for label in labels if isinstance(label, dict)]
    head = pr.get("head") or {}
    head_repo = (head.get("repo") or {}).get("full_name")
    repository = (payload.get("repository") or {}).get("full_name")
    event_label = str((payload.get("label") or {}).get("name", ""))
    renamed = renamed or {}
    return decide(
        event_name,
        str(payload.get("action", "")),
        canonical_labels(names, renamed),
        canonical_labels([event_label], renamed)[0],
        bool(pr.get("draft", False)),
        bool(pr) and head_repo != repository,
        head_message,
        closed=pr.get("state", "open") != "open",
    )


# What a push to main sweeps: the sweep a reused run must have measured.
PUSH = decide("push", "", [])

# --- which labels make a PR's sweep usable after the fact (reuse, /stage-results, merge) ---

FULL_SWEEP = tuple(name for name, shape in PRIMARY.items() if not shape.trim_conc)
# Modifiers whose sweeps cover only part of the configs, so their results cannot stand in
# for the full sweep a merge to main would run.
NOT_REUSABLE = ("evals-only", "agentx-fast")


def sweep_label_problem(
    number: int, labels: tuple[str, ...] | list[str], *, reuse: bool
) -> str | None:
    """Why PR #`number`'s labels do not describe one full sweep (None: they do).

    Exactly one primary label, and it is a full sweep: with two, the sweep workflow
    refuses to run, so no run can be said to be "the" sweep. `reuse=True` (reuse and the
    merge helper) also refuses modifiers whose results cannot replace a full sweep;
    /stage-results hands over whatever such a sweep produced, so it accepts them."""
    primaries = sorted(label for label in labels if label in PRIMARY)
    if len(primaries) > 1:
        listed = ", ".join(primaries)
        return f"PR #{number} has {len(primaries)} sweep labels ({listed}); it needs exactly one"
    if not primaries or primaries[0] not in FULL_SWEEP:
        found = f" (only {primaries[0]})" if primaries else ""
        return f"PR #{number} has no full-sweep label{found}"
    if reuse:
        partial = sorted(label for label in labels if label in NOT_REUSABLE)
        if partial:
            return f"PR #{number} has label {partial[0]}, whose sweeps are not reusable"
    return None
