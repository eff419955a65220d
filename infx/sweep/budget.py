"""`infx sweep status`: a plan's estimate against its budget, as the commit status
`infx/gpu-budget` a maintainer approves from. Pure."""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from infx.errors import UsageError
from infx.github.client import Status

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
    repo: str | None

    def __post_init__(self) -> None:
        if not re.fullmatch(r"[0-9a-f]{40}", self.sha):
            raise UsageError(f"--sha must be a full commit sha, not {self.sha!r}")


def parse_estimate(data: bytes, name: str) -> dict[str, Any]:
    """The estimate.json `sweep plan --estimate` wrote; anything else is a usage error."""
    try:
        doc = json.loads(data)
    except (json.JSONDecodeError, UnicodeDecodeError) as exc:
        raise UsageError(f"{name} is not an estimate: {exc}") from None
    if not isinstance(doc, dict) or doc.get("format") != "infx-sweep-estimate/1":
        raise UsageError(f"{name} is not an estimate written by `infx sweep plan`")
    return doc


def budget_status(estimate: dict[str, Any], approved: bool) -> tuple[Status, str]:
    """The status to set (pending while an over-budget sweep waits for approval) and the
    line saying so."""
    verdict = str(estimate.get("verdict", ""))
    if estimate.get("over-budget") is True and not approved:
        state, text = "pending", f"{verdict}; waiting for approval in {ENVIRONMENT}"
    elif estimate.get("over-budget") is True:
        state, text = "success", f"approved in {ENVIRONMENT}: {verdict}"
    else:
        state, text = "success", verdict
    status = Status(STATUS_CONTEXT, state, text[:_DESCRIPTION])
    return status, f"{STATUS_CONTEXT}: {state}: {text}"
