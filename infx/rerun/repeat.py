"""Repeats that settle an unconfirmed verdict (issue #24 item 4): with `[results]
confirm-repeats = N`, a PR sweep's compare that leaves configs unconfirmed dispatches a
rerun with scope `repeat`, which measures those configs' rows again; its own compare pools
its results with the earlier runs' (`compare --repeat`), and may ask for the next one, up
to N repeats in the lineage. A repeat is a rerun like any other: priced by its plan's
estimate and held by the budget gate when over budget.

Pure, except `read_verdict` (the verdict file a source run uploaded)."""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from infx.errors import UsageError
from infx.matrix.rows import MatrixRow
from infx.rerun.decide import Dispatch
from infx.rerun.rules import _point, expected, run_number
from infx.sweep.record import MAX_DEPTH, MAX_REPEATS, RunRecord

# Where a run's compare leaves its verdict (artifact `results-verdict`), below the folder
# the rerun's planning job downloads the source's results to.
VERDICT_FILE = "verdict.json"


def read_verdict(folder: Path) -> dict[str, Any]:
    """The source run's verdict document below `folder` (verdict/verdict.json); {} when the
    source left none (its compare did not run: nothing to repeat)."""
    path = folder / "verdict" / VERDICT_FILE
    return read_verdict_file(path) if path.is_file() else {}


def read_verdict_file(path: Path) -> dict[str, Any]:
    """A verdict document (what `infx results compare --verdict-out` wrote)."""
    try:
        data = json.loads(path.read_bytes())
    except (OSError, UnicodeDecodeError, json.JSONDecodeError):
        raise UsageError(f"{path} is not a verdict document (JSON)") from None
    if not isinstance(data, dict):
        raise UsageError(f"{path} is not a verdict document (an object)")
    return data


def _rows(verdict: Mapping[str, Any]) -> list[Mapping[str, Any]]:
    section = verdict.get("repeats")
    rows = section.get("rows") if isinstance(section, Mapping) else None
    return [r for r in rows if isinstance(r, Mapping)] if isinstance(rows, list) else []


def repeat_points(verdict: Mapping[str, Any]) -> set[str]:
    """The points the verdict's repeats name, each with its recipe (as `expected` keys
    them): a throughput point, or the accuracy point of an eval row."""
    found: set[str] = set()
    for row in _rows(verdict):
        identity, recipe = row.get("identity"), row.get("recipe")
        if isinstance(identity, Mapping):
            found |= {_point(kind, identity, recipe) for kind in ("throughput", "accuracy")}
    return found


def repeat_positions(plan_jobs: Sequence[tuple[MatrixRow, bool]], points: set[str]) -> list[int]:
    """Positions of the source plan's jobs that measure any of these points."""
    if not points:
        return []
    return [
        i
        for i, (row, is_eval) in enumerate(plan_jobs)
        if any(point in points for point in expected(row, is_eval))
    ]


def repeat_refusal(
    verdict: Mapping[str, Any],
    record: RunRecord | None,
    confirm: int,
    *,
    pr: int | None,
    head_repo: str,
    repo: str,
) -> str | None:
    """Why this run's compare dispatches no repeat (None: it does)."""
    if confirm <= 0:
        return "confirm-repeats is off"
    if pr is None:
        return "only a pull request's sweep is repeated"
    if head_repo != repo:
        return f"the PR's commits are {head_repo or 'of an unknown repository'}'s: a fork's sweep is never repeated"
    if record is None:
        return "this run has no rerun record"
    limit = min(confirm, MAX_REPEATS)
    if record.repeats >= limit:
        return f"this lineage already ran {record.repeats} of {limit} repeats"
    if record.depth + 1 >= MAX_DEPTH:
        return f"this lineage is {record.depth} reruns deep"
    if not _rows(verdict):
        return "no config is unconfirmed"
    return None


def repeat_dispatch(
    verdict: Mapping[str, Any],
    record: RunRecord | None,
    confirm: int,
    *,
    run_id: int,
    pr: int | None,
    head_repo: str,
    repo: str,
) -> dict[str, str] | None:
    """The rerun inputs of the next repeat, or None (`repeat_refusal` says why)."""
    why = repeat_refusal(verdict, record, confirm, pr=pr, head_repo=head_repo, repo=repo)
    if why is not None or pr is None:
        return None
    return {"rerun-of": str(run_id), "scope": "repeat", "pr-number": str(pr)}


@dataclass(frozen=True)
class RepeatRequest:
    """`infx sweep repeat`'s options, by their click names."""

    verdict_file: Path
    record_file: Path
    pr_text: str
    ref: str
    head_repo: str
    run_id: str
    workflow: str
    repo: str | None
    dry_run: bool = False

    def __post_init__(self) -> None:
        run_number(self.run_id, "--run-id")
        if self.pr_text:
            run_number(self.pr_text, "--pr")

    @property
    def pr(self) -> int | None:
        return int(self.pr_text) if self.pr_text else None


def repeat_decision(
    asked: RepeatRequest,
    verdict: Mapping[str, Any],
    record: RunRecord | None,
    confirm: int,
    repo: str,
    *,
    paired: bool = False,
) -> tuple[Dispatch | None, str]:
    """The dispatch of the next repeat (None: none) and what to say about it. A paired
    repeat (`paired-repeats`) runs main's row beside each of the PR's: twice the rows and
    the GPU-hours the verdict priced for the PR's half (its planning job prices the pairs
    main plans; a config main does not plan runs alone)."""
    inputs = repeat_dispatch(
        verdict, record, confirm,
        run_id=int(asked.run_id), pr=asked.pr, head_repo=asked.head_repo, repo=repo,
    )  # fmt: skip
    if inputs is None:
        why = repeat_refusal(verdict, record, confirm, pr=asked.pr, head_repo=asked.head_repo,
                             repo=repo)  # fmt: skip
        return None, f"no repeat: {why}"
    section = verdict.get("repeats") or {}
    hours = section.get("gpu_hours") if isinstance(section, Mapping) else None
    done = record.repeats if record is not None else 0
    count = len(_rows(verdict))
    if paired:
        priced = round(2 * hours, 3) if isinstance(hours, (int, float)) else hours
        said = (
            f"repeat {done + 1} of {min(confirm, MAX_REPEATS)}, paired: {count} row(s) of "
            f"unconfirmed configs run again, each beside main's row of its config on one node "
            f"({2 * count} jobs at most, about {priced} GPU-hours per repeat with both halves; "
            f"{_lineage(record, priced)})"
        )
        return {"workflow": asked.workflow, "ref": asked.ref, "inputs": inputs}, said
    said = (
        f"repeat {done + 1} of {min(confirm, MAX_REPEATS)}: {count} row(s) of "
        f"unconfirmed configs run again (about {hours} GPU-hours per repeat; "
        f"{_lineage(record, hours)})"
    )
    return {"workflow": asked.workflow, "ref": asked.ref, "inputs": inputs}, said


def _lineage(record: RunRecord | None, hours: object) -> str:
    """What the budget gate prices a repeat at: not its own GPU-hours but its lineage's,
    what the run's record says it was priced at so far with the repeat's own. A PR's record
    is its code's word, and the planning job prices the lineage no lower than the GPU jobs
    GitHub recorded for it: a floor."""
    spent = record.spent if record is not None else None
    if not spent or isinstance(hours, bool) or not isinstance(hours, (int, float)):
        return "the budget gate holds it when over budget"
    word = "at least" if record is not None and record.pr is not None else "about"
    return (
        f"the budget holds its lineage: {word} {spent + hours:,.1f} GPU-hours with it "
        f"({spent:,.1f} before it), and the budget gate holds it when that is over budget"
    )
