"""Success rate per hardware label over main's recent sweep runs: which runs count, which
jobs are benchmark jobs and under which label, which attempts count; then the command
against the fake API."""

from __future__ import annotations

import json
from pathlib import Path

from infx.github.values import Job
from infx.review.success import hardware, tally, tried
from tests.conftest import GitRepo
from tests.github.fake_api import FakeGitHub, stamp

POOLS = {"mi355x": ["mi355x-amds_00", "mi355x-amds_01"], "h200": ["h200-dgx_00"]}


def job(labels: list[str], conclusion: str | None, *, run_id: int = 1, ran: bool = True,
        attempt: int = 1, name: str = "single/0/0 x") -> dict:  # fmt: skip
    return {
        "id": abs(hash((run_id, name, attempt, tuple(labels), conclusion))) % 10**9,
        "run_id": run_id,
        "run_attempt": attempt,
        "name": name,
        "status": "completed",
        "conclusion": conclusion,
        "started_at": stamp(1) if ran else None,
        "completed_at": stamp(30),
        "runner_name": f"{labels[0]}_00" if ran else None,
        "labels": labels,
        "steps": [
            {"number": 1, "name": "Set up job", "status": "completed", "conclusion": "success"}
        ]
        if ran
        else [],
    }


def as_job(item: dict) -> Job:
    from infx.github import reading

    return reading.job(reading.Json(item))


def test_the_hardware_label_skips_hosted_and_scheduling_labels() -> None:
    assert hardware(["ubuntu-latest"], POOLS) is None
    assert hardware(["self-hosted", "mi355x", "nodes:1", "ci-job-1.000-ab"], POOLS) == "mi355x"
    assert hardware(["nodes:1", "ci-attempt-2", "h200"], POOLS) == "h200"
    assert hardware(["mi355x-amds_01"], POOLS) == "mi355x"  # a pinned node: its pool
    assert hardware(["gb300"], POOLS) == "gb300"  # a label runners.yaml does not know


def test_jobs_that_never_got_a_runner_are_not_counted() -> None:
    assert tried(as_job(job(["mi355x"], "failure")))
    assert tried(as_job(job(["mi355x"], "cancelled")))  # a timeout, or cancelled mid-run
    assert not tried(as_job(job(["mi355x"], "cancelled", ran=False)))  # fail-fast
    assert not tried(as_job(job(["mi355x"], "skipped", ran=False)))


def test_every_attempt_counts() -> None:
    jobs = [
        as_job(job(["mi355x"], "failure", attempt=1)),
        as_job(job(["mi355x"], "success", attempt=2)),
        as_job(job(["h200"], "success")),
        as_job(job(["ubuntu-latest"], "failure", name="collect")),
    ]
    found = tally({1: jobs}, POOLS)
    assert {k: (t.successful, t.attempts) for k, t in found.items()} == {
        "h200": (1, 1),
        "mi355x": (1, 2),
    }


def test_the_command_reads_only_mains_own_sweep_runs(
    repo: GitRepo, api: FakeGitHub, tmp_path: Path
) -> None:
    repo.commit("runners", **{"configs__runners.yaml": json.dumps({"labels": POOLS})})
    state = api.state
    state.add_run(1, head_sha="1" * 40, minute=1, branch="main", event="push", conclusion="failure")
    state.add_run(2, head_sha="2" * 40, minute=2, branch="main", event="workflow_dispatch")
    state.add_run(3, head_sha="3" * 40, minute=3, branch="main", event="pull_request")
    state.add_run(4, head_sha="4" * 40, minute=4, branch="main", event="push", head_repo="x/y")
    state.add_run(5, head_sha="5" * 40, minute=5, branch="main", event="push",
                  status="in_progress", conclusion=None)  # fmt: skip
    state.jobs[1] = [job(["mi355x"], "failure", run_id=1), job(["mi355x"], "success", run_id=1,
                     name="single/0/1 y"), job(["ubuntu-latest"], "success", run_id=1, name="setup")]  # fmt: skip
    state.jobs[2] = [job(["mi355x-amds_01"], "success", run_id=2)]
    for other in (3, 4, 5):
        state.jobs[other] = [job(["h200"], "failure", run_id=other)]
    out = tmp_path / "rate.json"
    done = repo.infx("sweep", "success-rate", "--json", str(out))
    assert done.exit_code == 0, done.output
    found = json.loads(out.read_text())
    assert found["runs"] == [2, 1]
    assert found["hardware"] == {
        "mi355x": {"successful": 2, "attempts": 3, "rate": 0.6667, "runs": 2}
    }
    assert "| mi355x | 2 | 3 | 66.7% | 2 |" in done.output
