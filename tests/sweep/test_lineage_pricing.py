"""A rerun is priced on its lineage: what the runs before it were priced at (rerun.json
`spent`), plus its own estimate, against the budget; a PR's lineage never below what
GitHub recorded of its GPU jobs."""

from __future__ import annotations

import json
import math
from datetime import UTC, datetime, timedelta

import pytest

from infx.errors import UsageError
from infx.github.values import Job, Run
from infx.matrix.cost import BudgetVerdict
from infx.matrix.options import PlanOptions
from infx.rerun.plan import LINEAGE_RUNS, lineage_root, lineage_runs
from infx.rerun.rules import gpu_job_hours, lineage_before
from infx.sweep.record import RunRecord

T0 = datetime(2026, 12, 1, tzinfo=UTC)


def record(pr: int | None = 17, spent: float | None = None) -> RunRecord:
    return RunRecord(7100, "pull_request", "a" * 40, pr, "full-sweep-enabled", PlanOptions(),
                     False, False, False, 7100, spent=spent)  # fmt: skip


def run(run_id: int, event: str = "workflow_dispatch", minute: int = 0) -> Run:
    return Run(run_id, "a" * 40, event, "completed", "failure",
               ".github/workflows/run-sweep.yml", 1, "", T0 + timedelta(minutes=minute))  # fmt: skip


def job(labels: tuple[str, ...], minutes: float | None, name: str = "single/0/0 x") -> Job:
    end = None if minutes is None else T0 + timedelta(minutes=minutes)
    return Job(1, 7100, 1, name, "completed", "failure", T0, end, None, labels, ())


def test_the_brief_s_lineage_needs_approval_though_each_dispatch_is_within_budget() -> None:
    """A 90 GPU-hour sweep and reruns of 45 each, with a budget of 100."""
    sweep = BudgetVerdict("full-sweep-enabled", 90.0, 100.0)
    assert not sweep.over
    first = BudgetVerdict("full-sweep-enabled", 45.0, 100.0, before=90.0)
    assert first.over and first.lineage_hours == 135.0
    assert first.text() == (
        "over budget: 135.0 of 100.0 GPU-hours (45.0 for this rerun on top of 90.0 its "
        "lineage was priced at) for label full-sweep-enabled"
    )
    assert not BudgetVerdict("full-sweep-enabled", 10.0, 100.0, before=90.0).over
    # A rerun of no jobs spends nothing, and asks no one.
    assert not BudgetVerdict("full-sweep-enabled", 0.0, 100.0, before=900.0).over
    # NaN stays over any budget.
    assert BudgetVerdict("full-sweep-enabled", math.nan, 100.0, before=1.0).over


def test_spent_travels_with_the_record_and_adds_up() -> None:
    source = record(spent=90.0)
    back = RunRecord.from_json(json.loads(json.dumps(source.as_json())), "rerun.json")
    assert back == source
    assert source.rerun(7101, "b" * 40, "infra", 135.0).spent == 135.0


def test_an_old_record_without_spent_still_reads_and_prices_the_rerun_alone() -> None:
    data = record().as_json()
    del data["spent"]
    old = RunRecord.from_json(data, "rerun.json")
    assert old.spent is None
    assert lineage_before(record(pr=None), None) == 0.0


@pytest.mark.parametrize("spent", [-1, True, "90", math.inf])
def test_a_record_whose_spent_is_no_number_of_hours_is_refused(spent: object) -> None:
    data = {**record().as_json(), "spent": spent}
    with pytest.raises(UsageError, match="not an infx rerun record"):
        RunRecord.from_json(data, "rerun.json")


def test_main_s_record_is_its_own_word_a_pr_s_has_github_s_record_as_its_floor() -> None:
    assert lineage_before(record(pr=None, spent=90.0), None) == 90.0
    assert lineage_before(record(spent=0.0), 64.0) == 64.0  # the PR's code wrote 0
    assert lineage_before(record(spent=90.0), 64.0) == 90.0  # approved, not all of it ran


def test_github_s_record_counts_every_self_hosted_job_whatever_its_name() -> None:
    gpus = {"mi355x": 8, "h100-small": 4}
    jobs = [
        job(("mi355x",), 60),
        job(("h100-small",), 30, name="renamed by the PR"),
        job(("mi355x-amds_03",), 60),  # a pinned node: the default node size
        job(("ubuntu-latest",), 600, name="setup"),
        job(("mi355x",), None),  # never finished
    ]
    assert gpu_job_hours(jobs, gpus) == 8 + 2 + 8


def test_the_lineage_runs_back_to_the_newest_sweep_that_held_gpus() -> None:
    source = run(7105, minute=50)
    branch = [run(7106, minute=60), run(7104, minute=40), run(7101, "pull_request", 10),
              run(7103, "pull_request", 30), source]  # fmt: skip
    assert [r.id for r in lineage_runs(source, branch)] == [7105, 7104, 7103, 7101]
    gpu = [job(("mi355x",), 60)]
    assert not lineage_root(run(7103, "pull_request"), [job(("ubuntu-latest",), 5)], {})
    assert not lineage_root(run(7104), gpu, {})
    assert lineage_root(run(7101, "pull_request"), gpu, {})
    many = [run(8000 + i, minute=i) for i in range(40)]
    assert len(lineage_runs(run(9000, minute=99), many)) == LINEAGE_RUNS
