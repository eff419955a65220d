"""What a sweep run's jobs say, as use cases: `sweep triage` (why jobs failed, per class,
node and pool, and the durations of the jobs that measured something) and `sweep timings`
(the durations the newest sweeps recorded). Pure: `infx.rerun.reads` reads the facts."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from infx.matrix.timings import Timings, job_slot, row_at, samples_of
from infx.rerun.rules import (
    MAX_LOGS,
    TIMINGS_FILE,
    TRIAGE_FILE,
    PlanFiles,
    has_result,
    outcomes,
    run_number,
    valid_points,
)
from infx.rerun.triage import Attempt, summary
from infx.results.table.rows import Table
from infx.sweep.outcome import Outcome, json_bytes

if TYPE_CHECKING:
    from infx.github.client import Job, Run

TRIAGE_FORMAT = "infx-sweep-triage/1"


def main_sweep(run: Run, workflow: str, repo: str, main_branch: str) -> bool:
    """A push to the main branch run by this repository's sweep workflow: the only runs
    whose jobs ran main's own workflow. A fork's run, a pull request's run and a branch's
    dispatch execute workflow files their authors wrote, and their artifacts say whatever
    those files like."""
    return (
        run.path.split("@", 1)[0] == f".github/workflows/{workflow}"
        and run.head_repo == repo
        and run.event == "push"
        and run.head_branch == main_branch
    )


def timings_outcome(out: Path, merged: Timings, used: list[int]) -> Outcome:
    """`sweep timings`: the merged job timings of the runs read, in one file."""
    shown = ", ".join(map(str, used)) or "none"
    line = f"job timings of {len(merged.jobs)} identities from run(s) {shown} -> {out}"
    return Outcome({out: json_bytes(merged.as_json())}, stdout=[line], make_folders=True)


@dataclass(frozen=True)
class TriageRequest:
    """`infx sweep triage`'s options, by their click names."""

    plan_dir: Path
    previous: Path | None
    results_dirs: tuple[Path, ...]
    out_dir: Path
    run_id: str
    repo: str | None

    def __post_init__(self) -> None:
        run_number(self.run_id, "--run-id")


@dataclass(frozen=True)
class TriageFacts:
    run_id: int  # this run
    files: PlanFiles  # this run's sweep-plan folder
    jobs: list[Job]  # every attempt of this run's jobs
    logs: dict[int, str | None]  # log tails read, by job id
    earlier: list[dict[str, Any]]  # the source run's attempts, for a rerun
    results: list[Table]  # this run's job results
    skipped: list[str]  # files that are not results


def needs_results(files: PlanFiles) -> bool:
    """Whether durations are recorded (an agentx-fast sweep's are not its recipe's)."""
    return files.record is None or not files.record.agentx_fast


def triage_outcome(facts: TriageFacts, out_dir: Path) -> Outcome:
    """`sweep triage`: every attempt with its class (the source run's too), the timings with
    the durations of the successful jobs that left a valid result (one that passed without
    one measured nothing: its minutes would make the next estimate too low), and the
    summary."""
    plan, this_run = facts.files.plan, facts.run_id
    attempts = [
        {
            "run": this_run,
            "attempt": outcome.attempt,
            "exp-name": outcome.row.get("exp-name"),
            "pool": str(outcome.row.get("runner")),
            "node": outcome.node,
            "conclusion": outcome.conclusion,
            "class": outcome.kind,
        }
        for outcome in outcomes(facts.jobs, plan, facts.logs)
    ]
    every = [a for a in facts.earlier if a.get("run") != this_run] + attempts
    out = Outcome(make_folders=True)
    out.stderr = [f"infx: warning: not counted as a result: {text}" for text in facts.skipped]
    out.files[out_dir / TRIAGE_FILE] = json_bytes({"format": TRIAGE_FORMAT, "attempts": every})
    recorded = facts.files.timings
    if needs_results(facts.files):
        points = valid_points(facts.results, None)

        def measured(job: Job) -> bool:
            slot = job_slot(job.name)
            row = row_at(plan, slot) if slot else None
            return (
                slot is not None
                and row is not None
                and has_result(row, slot.bucket.endswith("evals"), points)
            )

        done = [job for job in facts.jobs if job.conclusion == "success" and measured(job)]
        recorded = recorded.add(samples_of(done, plan, this_run))
    out.files[out_dir / TIMINGS_FILE] = json_bytes(recorded.as_json())
    notes = {"Logs read": f"{len(facts.logs)} (at most {MAX_LOGS} per run)"} if facts.logs else None
    kinds = [Attempt(a["pool"], a["node"], a["conclusion"], a["class"]) for a in every]
    out.summary = summary(kinds, notes)
    out.stdout.append(out.summary)
    return out
