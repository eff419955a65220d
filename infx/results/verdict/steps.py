"""Steps on main as values and as what is said about them: the suspect ranges they fall in,
their JSON, and the issue to open per range. Pure, and without NumPy: `infx.results.verdict.changes`
finds the steps."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from infx.results.table.metrics import Metric
from infx.results.table.rows import RunInfo

MARKER = "<!-- infx:results-change"


# A suspect range: (last good run id, first changed run id); and the commits in it.
Range = tuple[Any, Any]


Commits = dict[Range, list[tuple[str, str]] | None]


@dataclass(frozen=True)
class Step:
    key: str
    label: str
    conc: int
    metric: Metric
    before: float  # mean level of the segment before the step
    after: float  # mean level from the step on
    change_pct: float
    good: RunInfo  # doc["run"] of the last run before the step
    bad: RunInfo  # doc["run"] of the first run after it
    verdict: str  # improved | regressed
    strict: bool = True  # significant on its own, not only as part of its config's step


def ranges(steps: list[Step]) -> dict[Range, list[Step]]:
    """Steps grouped by (last good run id, first bad run id): one suspect range each."""
    out: dict[Range, list[Step]] = {}
    for step in steps:
        out.setdefault((step.good.get("id"), step.bad.get("id")), []).append(step)
    return out


def marker(bad: RunInfo) -> str:
    return f"{MARKER} run={bad.get('id')} -->"


def step_json(step: Step) -> dict[str, Any]:
    """A step as `infx results changes --format json` prints it."""
    return {
        "config": step.label,
        "key": step.key,
        "conc": step.conc,
        "metric": step.metric.key,
        "before": step.before,
        "after": step.after,
        "change_pct": step.change_pct,
        "verdict": step.verdict,
        "last_good": step.good,
        "first_changed": step.bad,
    }


@dataclass(frozen=True)
class ChangeIssue:
    """An issue to open for one suspect range; its body starts with the run's marker."""

    run_id: Any  # the first changed run
    marker: str
    title: str
    body: str


def unopened(issues: list[ChangeIssue], existing: list[str]) -> list[tuple[ChangeIssue, bool]]:
    """Each issue, and whether an open issue (one of the `existing` bodies) names its run."""
    bodies = "\n".join(existing)
    return [(issue, issue.marker in bodies) for issue in issues]
