"""`infx sweep status`: a plan's estimate against its budget, as the commit status
`infx/gpu-budget` a maintainer approves from, and, in the job that waits for approval,
whether a reviewer did approve.

The `gpu-budget` environment holds an over-budget sweep only while it has required
reviewers: GitHub creates an environment a job names when it is missing, unprotected, and
a job in an unprotected environment starts at once. So the approval job reads the
environment's protection rules and this run's recorded reviews, and passes only a
required reviewer's recorded approval; anything else (missing, unprotected, no approval
on record, an answer that cannot be read) holds the sweep, and the status says "held",
never "approved". Pure: the command reads the environment and the reviews."""

from __future__ import annotations

import json
import re
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from infx.errors import ConfigError, UsageError
from infx.github.client import Status
from infx.numbers import SQLITE_INTEGER_END, decimal

if TYPE_CHECKING:
    from infx.github.values import Approval, Environment

STATUS_CONTEXT = "infx/gpu-budget"
ENVIRONMENT = "gpu-budget"
# GitHub refuses a status description over 140 characters.
_DESCRIPTION = 140


@dataclass(frozen=True)
class StatusRequest:
    """`infx sweep status`'s options, by their click names."""

    estimate_file: Path
    sha: str
    approved: bool
    target_url: str
    run_id: str
    repo: str | None

    def __post_init__(self) -> None:
        if not re.fullmatch(r"[0-9a-f]{40}", self.sha):
            raise UsageError(f"--sha must be a full commit sha, not {self.sha!r}")
        number = decimal(self.run_id or "", below=SQLITE_INTEGER_END)
        if self.approved and (not number or self.run_id.startswith("0")):
            raise UsageError("--approved checks this run's approval: --run-id names no run")


def parse_estimate(data: bytes, name: str) -> dict[str, Any]:
    """The estimate.json `sweep plan --estimate` wrote; anything else is a usage error."""
    try:
        doc = json.loads(data)
    except (json.JSONDecodeError, UnicodeDecodeError) as exc:
        raise UsageError(f"{name} is not an estimate: {exc}") from None
    if not isinstance(doc, dict) or doc.get("format") != "infx-sweep-estimate/1":
        raise UsageError(f"{name} is not an estimate written by `infx sweep plan`")
    return doc


def approval_check(
    environment: Environment | None, approvals: Sequence[Approval]
) -> tuple[str | None, str]:
    """(the reviewer whose recorded approval passes the sweep, "") or (None, why it holds)."""
    if environment is None:
        return None, (
            f"environment {ENVIRONMENT} does not exist: GitHub created it unprotected and "
            "no one can approve this sweep; add required reviewers to it"
        )
    if not environment.reviewers:
        return None, (
            f"environment {ENVIRONMENT} has no required reviewers: no one can approve this "
            "sweep; add them in Settings > Environments"
        )
    approved = [
        a.user for a in approvals if a.state == "approved" and ENVIRONMENT in a.environments
    ]
    if not approved:
        return None, f"no reviewer's approval of {ENVIRONMENT} is recorded for this run"
    return approved[-1], ""


def budget_status(
    estimate: dict[str, Any], approved: bool, approver: str | None = None, held: str = ""
) -> tuple[Status, str]:
    """The status to set (pending while an over-budget sweep waits for approval; failure
    when its approval job found no reviewer's approval: `held`) and the line saying so."""
    verdict = str(estimate.get("verdict", ""))
    if held:
        state, text = "failure", f"held: {held}; {verdict}"
    elif estimate.get("over-budget") is True and not approved:
        state, text = "pending", f"waiting for approval in {ENVIRONMENT}: {verdict}"
    elif estimate.get("over-budget") is True:
        if not approver:
            raise ValueError("an approved status names no reviewer")
        state, text = "success", f"approved by {approver} in {ENVIRONMENT}: {verdict}"
    else:
        state, text = "success", verdict
    return Status(STATUS_CONTEXT, state, _short(text)), f"{STATUS_CONTEXT}: {state}: {text}"


def status_error(held: str) -> ConfigError | None:
    """The approval job's exit: 1 when the sweep is held."""
    return ConfigError(f"the sweep is held: {held}") if held else None


def _short(text: str) -> str:
    """A status description: what it says first, cut to GitHub's 140 characters."""
    return text if len(text) <= _DESCRIPTION else text[: _DESCRIPTION - 1] + "…"
