"""The writes of `results collect`, `compare` and `changes`, carried out from their
outcomes: the tables, --out, the step summary, the sticky comment and check run, the
verdict record, the issues.
Each yields its lines as (text, to stderr) in the order the steps happen, so a command
prints them as they are done. Nothing is decided here."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from pathlib import Path

from infx.github.actions import append_summary
from infx.history.changes import ChangesOutcome
from infx.history.verdicts import save
from infx.results.compare.facts import Reader, open_issues, publish
from infx.results.compare.rules import CompareOutcome, Reporting
from infx.results.ingest.collect import Collected
from infx.yamlio import atomic_write

Line = tuple[str, bool]  # (text, to stderr)


def collected(out_dir: Path, done: Collected) -> Iterator[Line]:
    """Warnings; then the run's tables written into `out_dir`, the summary, what it says."""
    yield from ((warning, True) for warning in done.warnings)
    out_dir.mkdir(parents=True, exist_ok=True)
    for name, data in done.files.items():
        atomic_write(out_dir / name, data)
    append_summary(done.summary)
    yield "\n".join(done.said), False


def compared(github: Callable[[], Reader], how: Reporting, done: CompareOutcome) -> Iterator[Line]:
    """Notes; then (with something compared) --out, the summary, stdout, the comment and
    check run, the verdict record; the failure last."""
    yield from ((note, True) for note in done.notes)
    if done.report is None:
        if done.stdout:
            yield done.stdout, False
    else:
        if how.out is not None:
            atomic_write(how.out, done.comment.encode())
        if how.verdict_out is not None:
            how.verdict_out.parent.mkdir(parents=True, exist_ok=True)
            atomic_write(how.verdict_out, done.verdict.encode())
        append_summary(done.summary)
        yield done.stdout, False
        yield from ((line, True) for line in publish(github, how, done))
        if done.record is not None and done.record_to is not None:
            yield save(done.record_to, done.record), True
    if done.failure:
        yield done.failure, True


def changed(github: Callable[[], Reader], done: ChangesOutcome) -> Iterator[Line]:
    """Warnings, the summary, stdout, then the issues opened."""
    yield from ((warning, True) for warning in done.warnings)
    append_summary(done.markdown)
    yield done.stdout, False
    yield from ((line, True) for line in open_issues(github, done.issues, done.label))
