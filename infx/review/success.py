"""Success rate per hardware label over main's recent sweep runs: which runner pools fail.

The rules:

- the runs: the newest completed runs of the sweep workflow on the main branch of this
  repository (pushes, and the reruns dispatched from it), at most `runs` of them;
- a job's hardware label is its first runner label (as the jobs API lists them) that is
  neither GitHub-hosted (`ubuntu-*`, `windows-*`, `macos-*`), `self-hosted`, nor a
  scheduling label (`nodes:`, `ci-job-`, `ci-attempt-`, `ci-skip-queue-pr-`); a node a
  rerun pinned the job to counts for the pool runners.yaml lists it under, when exactly one
  pool lists it. A job with no such label (setup, collect) is not a benchmark job;
- every attempt counts (GitHub's "re-run failed jobs" keeps the first attempt's jobs): a
  success is a success; a failure, a timeout, a job cancelled after a runner took it are
  failures; a skipped job, or one cancelled before any runner took it (fail-fast, a newer
  push) never tried and is not counted.

Pure: runs and their jobs in, counts out.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from infx.github.values import Job, Run
from infx.markdown import table, text

FORMAT = "infx-success-rate/1"
_HOSTED = ("ubuntu-", "windows-", "macos-")
_SCHEDULING = ("nodes:", "ci-job-", "ci-attempt-", "ci-skip-queue-pr-")


@dataclass
class Tally:
    successful: int = 0
    attempts: int = 0
    runs: set[int] = field(default_factory=set)

    @property
    def rate(self) -> float:
        return self.successful / self.attempts if self.attempts else 0.0


def sweep_runs(runs: Iterable[Run], workflow: str, branch: str, repo: str, limit: int) -> list[Run]:
    """The newest `limit` completed runs of the sweep on the main branch, this repository's."""
    return [
        run
        for run in runs
        if run.status == "completed"
        and run.event in ("push", "workflow_dispatch")
        and run.head_branch == branch
        and run.head_repo == repo
        and run.path.endswith(f".github/workflows/{workflow}")
    ][:limit]


def hardware(labels: Sequence[str], pools: Mapping[str, Sequence[str]]) -> str | None:
    """The hardware label of a job from its runner labels (None: a GitHub-hosted job)."""
    for label in labels:
        if label == "self-hosted" or label.startswith(_HOSTED) or label.startswith(_SCHEDULING):
            continue
        if label in pools:
            return label
        owners = [pool for pool, nodes in pools.items() if label in nodes]
        return owners[0] if len(owners) == 1 else label
    return None


def tried(job: Job) -> bool:
    """Whether a runner took the job: a skipped job never did, nor one cancelled before."""
    if job.status != "completed" or job.conclusion in (None, "skipped", "neutral"):
        return False
    if job.conclusion == "cancelled":
        return job.runner_name is not None or (job.started_at is not None and bool(job.steps))
    return True


def tally(
    jobs_by_run: Mapping[int, Sequence[Job]], pools: Mapping[str, Sequence[str]]
) -> dict[str, Tally]:
    found: dict[str, Tally] = {}
    for run_id, jobs in jobs_by_run.items():
        for job in jobs:
            label = hardware(job.labels, pools)
            if label is None or not tried(job):
                continue
            held = found.setdefault(label, Tally())
            held.attempts += 1
            held.successful += job.conclusion == "success"
            held.runs.add(run_id)
    return dict(sorted(found.items()))


def as_json(runs: Sequence[Run], found: Mapping[str, Tally]) -> dict[str, Any]:
    return {
        "format": FORMAT,
        "runs": [run.id for run in runs],
        "hardware": {
            label: {
                "successful": t.successful,
                "attempts": t.attempts,
                "rate": round(t.rate, 4),
                "runs": len(t.runs),
            }
            for label, t in found.items()
        },
    }


def markdown(runs: Sequence[Run], found: Mapping[str, Tally], branch: str) -> str:
    lines = [f"### Benchmark job success rate on {text(branch)}", ""]
    shown = ", ".join(str(run.id) for run in runs) or "none"
    lines.append(f"{len(runs)} run(s): {text(shown)}. Every attempt of every benchmark job counts.")
    lines.append("")
    if not found:
        lines.append("No benchmark job ran in these runs.")
        return "\n".join(lines) + "\n"
    rows = [
        (text(label), t.successful, t.attempts, f"{100 * t.rate:.1f}%", len(t.runs))
        for label, t in found.items()
    ]
    lines.append(table(("hardware", "successful", "attempts", "rate", "runs"), rows,
                       ("left", "right", "right", "right", "right")))  # fmt: skip
    return "\n".join(lines) + "\n"
