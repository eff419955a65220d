"""What a PR's labels ask the sweep workflow to do.

Exactly one primary label picks the sweep shape; modifiers adjust it. The
decision is pure data so the workflow's gating can be tested for every
combination of event, action, labels, draft and fork.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass

from infx.errors import InfxError


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


class LabelError(InfxError):
    """Labels that contradict each other; the PR author must fix them."""

    exit_code = 1


@dataclass(frozen=True)
class Decision:
    run: bool
    reason: str
    label: str = ""
    trim_conc: bool = False
    canary: bool = False
    fail_fast: bool = False
    all_evals: bool = False
    evals_only: bool = False
    agentic_only: bool = False
    reusable: bool = False

    def outputs(self) -> dict[str, str]:
        return {
            k.replace("_", "-"): (str(v).lower() if isinstance(v, bool) else v)
            for k, v in asdict(self).items()
        }


def decide(
    event_name: str,
    action: str,
    labels: list[str],
    event_label: str = "",
    draft: bool = False,
    fork: bool = False,
    head_message: str = "",
) -> Decision:
    """The sweep a workflow run should perform (run=False: nothing but this decision)."""
    if event_name == "push":
        return Decision(True, "push to main: full sweep with canary", canary=True, reusable=True)
    if event_name != "pull_request":
        return Decision(False, f"event {event_name} does not run sweeps")
    if draft:
        return Decision(False, "draft pull requests never reach the GPU runners")
    if fork:
        return Decision(False, "pull requests from forks never reach the self-hosted runners")
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
    agentic_only = "agentx-fast" in labels
    reusable = shape.reusable and not evals_only and not agentic_only
    return Decision(
        True,
        f"label {label}",
        label,
        shape.trim_conc,
        shape.canary and not evals_only,
        shape.fail_fast,
        "all-evals" in labels,
        evals_only,
        agentic_only,
        reusable,
    )


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
