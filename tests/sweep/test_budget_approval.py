"""Whether an over-budget sweep was approved: only a required reviewer of the gpu-budget
environment, recorded as approving this run, passes it; every other answer holds."""

from __future__ import annotations

import pytest

from infx.github.values import Approval, Environment
from infx.sweep.budget import approval_check, budget_status

PROTECTED = Environment("gpu-budget", ("lead", "gpu-owners"))
APPROVED = Approval("approved", "lead", ("gpu-budget",))
ESTIMATE = {"over-budget": True, "verdict": "over budget: 22.0 of 10.0 GPU-hours for label x"}


@pytest.mark.parametrize(
    ("environment", "approvals", "why"),
    [
        (None, [APPROVED], "gpu-budget does not exist"),
        (Environment("gpu-budget", ()), [APPROVED], "has no required reviewers"),
        (PROTECTED, [], "no reviewer's approval of gpu-budget is recorded"),
        (PROTECTED, [Approval("rejected", "lead", ("gpu-budget",))], "is recorded"),
        (PROTECTED, [Approval("approved", "lead", ("production",))], "is recorded"),
    ],
)
def test_anything_but_a_recorded_approval_of_a_protected_environment_holds(
    environment: Environment | None, approvals: list[Approval], why: str
) -> None:
    approver, found = approval_check(environment, approvals)
    assert approver is None and why in found
    status, _ = budget_status(ESTIMATE, approved=False, held=found)
    assert status.state == "failure" and status.description.startswith(f"held: {found}"[:100])
    assert "approved" not in status.description.replace("approval", "")


def test_a_recorded_approval_names_its_reviewer() -> None:
    approver, why = approval_check(PROTECTED, [APPROVED])
    assert (approver, why) == ("lead", "")
    status, _ = budget_status(ESTIMATE, approved=True, approver="lead")
    assert status.state == "success"
    assert status.description == f"approved by lead in gpu-budget: {ESTIMATE['verdict']}"


def test_approved_without_a_reviewer_never_reads_approved() -> None:
    with pytest.raises(ValueError, match="names no reviewer"):
        budget_status(ESTIMATE, approved=True)
