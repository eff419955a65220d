"""The writes of the rerun and budget use cases (`sweep status`, `sweep rerun`,
`sweep dispatch-rerun`, `/rerun-failed`): what a decided outcome asks of GitHub, carried
out after the command wrote that outcome. Nothing is decided here."""

from __future__ import annotations

import os
from collections.abc import Iterator

from infx.errors import GitHubError
from infx.github.client import GitHub
from infx.rerun.decide import RerunOutcome
from infx.rerun.reads import approval_facts, client
from infx.sweep.budget import (
    StatusRequest,
    approval_check,
    budget_status,
    parse_estimate,
    status_error,
)
from infx.sweep.outcome import Outcome


def carry_out(gh: GitHub, outcome: RerunOutcome) -> Iterator[str]:
    """Start the workflow and react to the comment the outcome names, saying each as done."""
    if (sent := outcome.dispatch) is not None:
        gh.dispatch_workflow(sent["workflow"], sent["ref"], sent["inputs"])
        yield f"dispatched {sent['workflow']} on {sent['ref']} with {sent['inputs']}"
    if outcome.react is not None:
        gh.react(*outcome.react, os.environ.get("INFX_BOT_LOGIN", "github-actions[bot]"))
    yield from outcome.after


def set_budget_status(asked: StatusRequest) -> Outcome:
    """Set the estimate's status on the commit; with --approved, first check that a
    required reviewer approved this run. In the approval job a status the token may not
    set is only a warning: the exit still says whether the sweep is held."""
    estimate = parse_estimate(asked.estimate_file.read_bytes(), str(asked.estimate_file))
    gh = client(asked.repo)
    approver, held = None, ""
    if asked.approved:
        approver, held = approval_check(*approval_facts(gh, int(asked.run_id)))
    commit_status, line = budget_status(estimate, asked.approved, approver, held)
    warnings = []
    try:
        gh.set_status(asked.sha, commit_status, asked.target_url or None)
    except GitHubError as exc:
        if not asked.approved:
            raise
        warnings.append(f"infx: warning: the status was not set: {exc}")
    return Outcome(stdout=[line], stderr=warnings, error=status_error(held))
