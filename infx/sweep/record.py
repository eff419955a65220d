"""The record a sweep run keeps of itself (`rerun.json` in its sweep-plan artifact): what a
rerun of it, or a reuse of it, needs to know about how it was planned."""

from __future__ import annotations

import math
from dataclasses import asdict, dataclass, replace
from typing import Any

from infx.errors import UsageError
from infx.matrix.options import PlanOptions

RECORD_FILE = "rerun.json"
PLAN_ARTIFACT = "sweep-plan"
# Beside a rerun's plan: row id -> the runner node its job is pinned to.
PINS_FILE = "runs-on.json"
SCOPES = ("missing", "infra", "repeat")
# Reruns of reruns: a lineage stops growing here (each one is a person's or the retry's
# decision; this only bounds a loop).
MAX_DEPTH = 10
# Repeats (scope repeat) one lineage may run, whatever dispatches them; the setting is lower.
MAX_REPEATS = 5


@dataclass(frozen=True)
class RunRecord:
    """What a rerun of a run needs to know about it (`rerun.json` in its sweep-plan)."""

    run_id: int
    event: str
    sha: str  # the commit the run checked out and benchmarked
    pr: int | None
    category: str  # the budget category: primary label, or push
    options: PlanOptions
    canary: bool
    fail_fast: bool
    agentx_fast: bool
    root: int  # the original sweep of the lineage
    source: int | None = None  # the run this one reran
    scope: str | None = None  # None: an original sweep
    depth: int = 0
    repeats: int = 0  # `repeat` reruns in the lineage (issue #24: confirm-repeats)
    # Why the original sweep waited for a reviewer because of who asked for it ("": it need
    # not). Its reruns are dispatched with the workflow's token, which names no one: they
    # wait too, whatever they cost, or GPU-hours would start that no one allowed to spend
    # them asked for.
    held: str = ""
    # GPU-hours the lineage has been priced at through this run: every run's estimate as
    # the budget priced it (held hours), the original sweep's first. A rerun is priced on
    # this plus its own estimate (issue: the budget was per dispatch, not per lineage).
    # None: a record written before infx kept it (the rerun is priced on its own estimate).
    spent: float | None = None

    def as_json(self) -> dict[str, Any]:
        out = asdict(self)
        out["options"] = asdict(self.options)
        return {"format": "infx-rerun-record/1", **out}

    @classmethod
    def from_json(cls, data: Any, name: str) -> RunRecord:
        try:
            if data.get("format") != "infx-rerun-record/1":
                raise ValueError("format")
            fields = {k: v for k, v in data.items() if k != "format"}
            fields["options"] = PlanOptions(**fields["options"])
            record = cls(**fields)
        except (AttributeError, KeyError, TypeError, ValueError):
            raise UsageError(f"{name} is not an infx rerun record") from None
        if record.scope not in (None, *SCOPES) or not isinstance(record.run_id, int):
            raise UsageError(f"{name} is not an infx rerun record")
        if record.spent is not None and not _hours(record.spent):
            raise UsageError(f"{name} is not an infx rerun record (spent: {record.spent!r})")
        return record

    def rerun(self, run_id: int, sha: str, scope: str, spent: float | None = None) -> RunRecord:
        """The record of a rerun of this run (`spent`: its lineage's GPU-hours with its own)."""
        return replace(
            self,
            run_id=run_id,
            event="workflow_dispatch",
            sha=sha,
            source=self.run_id,
            scope=scope,
            depth=self.depth + 1,
            repeats=self.repeats + int(scope == "repeat"),
            spent=spent,
        )


def _hours(value: object) -> bool:
    """A number of GPU-hours a record may hold: finite and not negative (never a bool)."""
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        return False
    return math.isfinite(value) and value >= 0
