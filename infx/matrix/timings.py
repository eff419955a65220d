"""Job timings: how long earlier benchmark jobs of each identity took, carried from sweep to
sweep in a small file, and the link between a workflow job and its matrix row.

Every benchmark job is named `<bucket>/<chunk>/<index> <exp-name>` (benchmark-tmpl.yml), so
the jobs API names the row it ran: the chunk's rows come from the run's own plan. The
`collect` job of each sweep reads its run's jobs, adds the durations of the successful ones
to the timings it started from and uploads the result as the `job-timings` artifact; the
next sweep's planning job reads the newest such artifacts (`infx sweep timings`).
"""

from __future__ import annotations

import json
import math
import re
from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from infx.errors import UsageError
from infx.matrix.cost import job_key
from infx.matrix.rows import MatrixRow, PlanDocument, chunk_rows

if TYPE_CHECKING:
    from infx.github.client import Job

FORMAT = "infx-job-timings/1"
ARTIFACT = "job-timings"
# Samples kept per identity: the newest, by run id.
KEEP = 20
# A successful benchmark job shorter than this did not benchmark anything worth timing
# (a stub, a cached no-op); it would make every later estimate too low.
MIN_SECONDS = 60.0
# `<bucket>/<chunk>/<index> <exp-name>`, possibly after the caller's `name (matrix) / `
# (GitHub trims the space an empty exp-name leaves).
_TAG = re.compile(r"(?:^|/ )([a-z][a-z-]*)/(\d+)/(\d+)(?: |$)")


@dataclass(frozen=True)
class JobSlot:
    """Where a benchmark job sits in its run's plan."""

    bucket: str
    chunk: int
    index: int


def job_slot(name: str) -> JobSlot | None:
    """The plan position a benchmark job's name carries (None: not a benchmark job)."""
    found = _TAG.search(name)
    if found is None:
        return None
    return JobSlot(found.group(1), int(found.group(2)), int(found.group(3)))


def row_at(plan: PlanDocument, slot: JobSlot) -> MatrixRow | None:
    """The row a job ran, from its run's plan; None when the plan has no such slot."""
    try:
        rows = chunk_rows(plan, slot.bucket, slot.chunk)
    except UsageError:
        return None
    return rows[slot.index] if 0 <= slot.index < len(rows) else None


@dataclass
class Timings:
    """Job key -> [(seconds, run id)], oldest run first."""

    jobs: dict[str, list[tuple[float, int]]] = field(default_factory=dict)

    def durations(self) -> dict[str, list[float]]:
        """What the estimator reads: plausible durations per identity, oldest first."""
        return {
            key: [seconds for seconds, _ in samples if seconds >= MIN_SECONDS]
            for key, samples in self.jobs.items()
        }

    def add(self, samples: Iterable[tuple[str, float, int]]) -> Timings:
        """These (key, seconds, run id) samples added; a run counts once per key."""
        merged = {key: list(values) for key, values in self.jobs.items()}
        for key, seconds, run_id in samples:
            held = merged.setdefault(key, [])
            if any(run == run_id for _, run in held):
                continue
            held.append((float(seconds), int(run_id)))
        for held in merged.values():
            held.sort(key=lambda sample: sample[1])
            del held[:-KEEP]
        return Timings(merged)

    def merge(self, other: Timings) -> Timings:
        return self.add((k, s, r) for k, samples in other.jobs.items() for s, r in samples)

    def as_json(self) -> dict[str, Any]:
        return {
            "format": FORMAT,
            "jobs": {
                key: [[s, r] for s, r in samples] for key, samples in sorted(self.jobs.items())
            },
        }


def parse_timings(data: bytes, name: str) -> Timings:
    """A job-timings file; anything else is a usage error naming it."""
    from infx import schemas

    try:
        doc = json.loads(data)
    except (json.JSONDecodeError, UnicodeDecodeError) as exc:
        raise UsageError(f"{name}: not a job-timings file: {exc}") from None
    problems = schemas.errors("job-timings", doc)
    if problems:
        raise UsageError(f"{name}: not a job-timings file: {problems[0].message}")
    jobs = {k: [(float(s), int(r)) for s, r in v] for k, v in doc["jobs"].items()}
    if any(not math.isfinite(s) for samples in jobs.values() for s, _ in samples):
        raise UsageError(f"{name}: not a job-timings file: a duration is not a finite number")
    return Timings(jobs)


def samples_of(
    jobs: Iterable[Job], plan: PlanDocument, run_id: int
) -> list[tuple[str, float, int]]:
    """(key, seconds, run id) of every successful benchmark job of a run, mapped to its row
    through the run's plan."""
    found = []
    for job in jobs:
        slot = job_slot(job.name)
        seconds = job.seconds
        if slot is None or job.conclusion != "success" or seconds is None:
            continue
        row = row_at(plan, slot)
        if row is not None:
            found.append((job_key(row), seconds, run_id))
    return found
