"""Job timings: a benchmark job's name leads back to its row, durations roll from sweep to
sweep, and nothing that is not a plausible duration lowers a later estimate."""

from __future__ import annotations

import json
from datetime import UTC, datetime, timedelta

import pytest

from infx.errors import UsageError
from infx.github.client import Job
from infx.matrix.cost import job_key
from infx.matrix.timings import (
    KEEP,
    JobSlot,
    Timings,
    job_slot,
    parse_timings,
    row_at,
    samples_of,
)
from tests.results.formats import fixed_row

T0 = datetime(2026, 12, 1, tzinfo=UTC)


def plan(concs=(4, 8, 16)) -> dict:
    return {
        "single_node": {"1k1k": [fixed_row(conc=c) for c in concs]},
        "multi_node": {},
        "evals": [],
        "agentic_evals": [],
        "multinode_evals": [],
        "multinode_agentic_evals": [],
    }


@pytest.mark.parametrize(
    ("name", "slot"),
    [
        ("single-node (0) / single/0/2 llama70b_1k1k", JobSlot("single", 0, 2)),
        (
            "multi-node agentic (3) / multi-agentic/3/255 dsr1_p1x8_d1x8_conc64",
            JobSlot("multi-agentic", 3, 255),
        ),
        ("agentic evals (0) / agentic-evals/0/0 x", JobSlot("agentic-evals", 0, 0)),
        # Commas, brackets and unicode in an exp-name, and an exp-name that names a slot.
        ("single-node (0) / single/0/3 llama,[x]✓ ü", JobSlot("single", 0, 3)),
        ("single-node (0) / single/0/3 a / evals/0/9 b", JobSlot("single", 0, 3)),
        # An empty exp-name: GitHub trims the name's trailing space.
        ("single-node (0) / single/0/4", JobSlot("single", 0, 4)),
        ("setup", None),
        ("collect results", None),
        ("single-node (0) / rows", None),
    ],
)
def test_a_benchmark_job_name_carries_its_slot(name: str, slot: JobSlot | None) -> None:
    assert job_slot(name) == slot


def test_a_slot_outside_the_plan_names_no_row() -> None:
    assert row_at(plan(), JobSlot("single", 0, 2))["conc"] == 16
    assert row_at(plan(), JobSlot("single", 0, 3)) is None
    assert row_at(plan(), JobSlot("single", 1, 0)) is None
    assert row_at(plan(), JobSlot("nonsense", 0, 0)) is None


def job(index: int, conclusion: str, minutes: float) -> Job:
    return Job(index, 7, 1, f"single-node (0) / single/0/{index} llama70b_1k1k", "completed",
               conclusion, T0, T0 + timedelta(minutes=minutes), "n0", ("mi355x",), ())  # fmt: skip


def test_only_successful_jobs_count_and_short_ones_are_ignored() -> None:
    rows = plan()["single_node"]["1k1k"]
    samples = samples_of([job(0, "success", 20), job(1, "failure", 1), job(2, "success", 0.5)],
                         plan(), 7)  # fmt: skip
    assert samples == [(job_key(rows[0]), 1200.0, 7), (job_key(rows[2]), 30.0, 7)]
    durations = Timings().add(samples).durations()
    assert durations[job_key(rows[0])] == [1200.0]
    assert durations[job_key(rows[2])] == []  # 30 s measured nothing: not a duration


def test_samples_roll_newest_kept_a_run_counted_once() -> None:
    timings = Timings()
    for run in range(1, KEEP + 6):
        timings = timings.add([("k" * 20, 100.0 + run, run), ("k" * 20, 999.0, run)])
    samples = timings.jobs["k" * 20]
    assert len(samples) == KEEP and samples[0] == (106.0, 6) and samples[-1][1] == KEEP + 5
    merged = Timings({"k" * 20: [(70.0, 1)]}).merge(timings)
    assert len(merged.jobs["k" * 20]) == KEEP  # run 1 is older than every kept sample


@pytest.mark.parametrize(
    "text",
    [
        "{",
        '{"format": "infx-job-timings/1", "jobs": {"' + "a" * 20 + '": [[NaN, 1]]}}',
        '{"format": "infx-job-timings/1", "jobs": {"' + "a" * 20 + '": [[Infinity, 1]]}}',
        '{"format": "infx-job-timings/1", "jobs": {"' + "a" * 20 + '": [[0, 1]]}}',
        '{"format": "infx-job-timings/1", "jobs": {"short": [[60, 1]]}}',
        json.dumps({"format": "infx-job-timings/2", "jobs": {}}),
    ],
)
def test_a_file_that_is_not_timings_is_refused(text: str) -> None:
    with pytest.raises(UsageError, match="not a job-timings file"):
        parse_timings(text.encode(), "timings.json")
