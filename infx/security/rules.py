"""How `infx security check` judges the settings it read: one finding per check, and the
command's outcome. Pure: the facts come from infx/security/facts.py."""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Literal

from infx.github.values import PrivateForkPolicy, SelfHostedRunner
from infx.security.facts import Facts, Unread

State = Literal["ok", "problem", "unread"]
APPROVE_ALL = "all_external_contributors"
_WORD = {"ok": "ok", "problem": "PROBLEM", "unread": "unread"}


@dataclass(frozen=True)
class Finding:
    check: str
    state: State
    text: str


@dataclass(frozen=True)
class Outcome:
    """What the command prints and how it exits: 1 when a setting is at fault, else 2 when
    one could not be read (never a pass), else 0."""

    lines: list[str]
    exit_code: int
    error: str | None  # the closing error line, with exit 2


def gpu_runners(
    runners: Iterable[SelfHostedRunner], labels: Iterable[str], nodes: Iterable[str]
) -> list[SelfHostedRunner]:
    """The runners a benchmark job can land on: a runners.yaml label, or a node it names."""
    wanted, named = set(labels), set(nodes)
    return [r for r in runners if r.name in named or wanted & set(r.labels)]


def _fork_approval(facts: Facts) -> Finding:
    policy = facts.fork_approval
    if isinstance(policy, Unread):
        return Finding("fork-approval", "unread", policy.reason)
    if isinstance(policy, PrivateForkPolicy):
        if not policy.run_workflows:
            return Finding("fork-approval", "ok", "workflows never run for fork pull requests")
        loose = [
            what
            for what, on in (
                ("fork PR runs need no approval", not policy.require_approval),
                ("they get a write token", policy.send_write_tokens),
                ("they get secrets and variables", policy.send_secrets),
            )
            if on
        ]
        if loose:
            return Finding("fork-approval", "problem", "; ".join(loose))
        return Finding("fork-approval", "ok", "fork PR runs wait for approval, read-only")
    if policy != APPROVE_ALL:
        return Finding(
            "fork-approval",
            "problem",
            f"approval policy is {policy}: a contributor who once had a PR merged runs fork "
            "code unapproved. Set Settings > Actions > General > Approval for running fork "
            "pull request workflows to all external contributors",
        )
    return Finding("fork-approval", "ok", "every outside contributor's run waits for approval")


def _token(facts: Facts) -> Finding:
    found = facts.token_permissions
    if isinstance(found, Unread):
        return Finding("workflow-token", "unread", found.reason)
    default, may_approve = found
    problems = []
    if default != "read":
        problems.append(f"the default workflow token is {default}, not read")
    if may_approve:
        problems.append("workflows may approve pull requests")
    if problems:
        return Finding("workflow-token", "problem", "; ".join(problems))
    return Finding("workflow-token", "ok", "read-only by default, cannot approve pull requests")


def _ephemeral(gpu: list[SelfHostedRunner] | Unread) -> Finding:
    if isinstance(gpu, Unread):
        return Finding("ephemeral-runners", "unread", gpu.reason)
    if not gpu:
        return Finding(
            "ephemeral-runners",
            "unread",
            "no runner with a runners.yaml label or node name is visible to this token",
        )
    kept = sorted(r.name for r in gpu if r.ephemeral is False)
    unsaid = sorted(r.name for r in gpu if r.ephemeral is None)
    if kept:
        return Finding(
            "ephemeral-runners",
            "problem",
            f"{', '.join(kept)} keep their state between jobs (register them with "
            "--ephemeral): what one job leaves behind runs in the next",
        )
    if unsaid:
        return Finding("ephemeral-runners", "unread", f"the API does not say for {unsaid}")
    return Finding("ephemeral-runners", "ok", f"{len(gpu)} GPU runner(s), each ephemeral")


def _groups(
    facts: Facts, gpu: list[SelfHostedRunner] | Unread, allowed: tuple[str, ...]
) -> Finding:
    if facts.organization is None:
        return Finding(
            "runner-groups",
            "problem",
            f"{facts.repo} belongs to a user: only an organization's runner groups can limit "
            "its GPU runners to the sweep workflows",
        )
    if isinstance(facts.groups, Unread):
        return Finding("runner-groups", "unread", facts.groups.reason)
    if isinstance(gpu, Unread) or not gpu:
        return Finding("runner-groups", "unread", "no GPU runner to find the group of")
    by_id = {g.id: g for g in facts.groups or []}
    paths = {f"{facts.repo}/.github/workflows/{name}" for name in allowed}
    problems, unsaid = [], []
    for group_id in sorted({r.group_id for r in gpu if r.group_id is not None}):
        group = by_id.get(group_id)
        if group is None:
            unsaid.append(f"group {group_id}")
        elif not group.restricted_to_workflows:
            problems.append(f"group {group.name!r} lets every workflow use its runners")
        else:
            others = [w for w in group.selected_workflows if w.split("@")[0] not in paths]
            if others:
                problems.append(f"group {group.name!r} also lets {', '.join(others)} in")
    repo_level = sorted(r.name for r in gpu if r.group_id is None)
    if repo_level:
        problems.append(
            f"{', '.join(repo_level)} belong to no organization runner group: every workflow "
            "of the repository can use them"
        )
    if problems:
        return Finding("runner-groups", "problem", "; ".join(problems))
    if unsaid:
        return Finding("runner-groups", "unread", f"cannot read {', '.join(unsaid)}")
    return Finding(
        "runner-groups",
        "ok",
        f"GPU runners serve only {', '.join(sorted(allowed))} of {facts.repo}",
    )


def _budget_environment(facts: Facts) -> Finding:
    """The budget holds an over-budget sweep only while its environment has required
    reviewers; GitHub creates a missing environment, unprotected, when a job names it."""
    found, name = facts.budget_environment, facts.environment_name
    if isinstance(found, Unread):
        return Finding("budget-environment", "unread", found.reason)
    if found is None:
        return Finding(
            "budget-environment",
            "problem",
            f"environment {name} does not exist: GitHub creates it unprotected when a sweep "
            "first names it, and no one can approve an over-budget sweep there (infx holds "
            "it). Create it with required reviewers (Settings > Environments)",
        )
    if not found.reviewers:
        return Finding(
            "budget-environment",
            "problem",
            f"environment {name} has no required reviewers: no one can approve an "
            "over-budget sweep there (infx holds it). Add required reviewers",
        )
    who = " or ".join(found.reviewers)
    return Finding("budget-environment", "ok", f"an over-budget sweep waits in {name} for {who}")


def findings(
    facts: Facts, labels: Iterable[str], nodes: Iterable[str], allowed: tuple[str, ...]
) -> list[Finding]:
    """Each check's verdict. `labels`/`nodes`: runners.yaml's; `allowed`: the workflow file
    names whose jobs run on GPU runners."""
    gpu = facts.runners
    if not isinstance(gpu, Unread):
        gpu = gpu_runners(gpu, labels, nodes)
    return [
        _fork_approval(facts),
        _token(facts),
        _ephemeral(gpu),
        _groups(facts, gpu, allowed),
        _budget_environment(facts),
    ]


def check(facts: Facts, labels: Mapping[str, Iterable[str]], allowed: tuple[str, ...]) -> Outcome:
    """The command's outcome: `labels` maps each runners.yaml label to its nodes."""
    nodes = [node for names in labels.values() for node in names]
    found = findings(facts, labels, nodes, allowed)
    lines = [f"{_WORD[f.state]:8} {f.check}: {f.text}" for f in found]
    states = {f.state for f in found}
    if "problem" in states:
        return Outcome(lines, 1, None)
    if "unread" in states:
        error = (
            "some settings could not be read: use a token that may administer "
            f"{facts.repo} and read its organization's runners"
        )
        return Outcome(lines, 2, error)
    return Outcome(lines, 0, None)
