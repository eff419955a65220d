"""The writes of `results collect`, `compare` and `changes`, carried out from their
outcomes: the tables, --out, the step summary, the sticky comment and check run, the
verdict record, the issues.
Each yields its lines as (text, to stderr) in the order the steps happen, so a command
prints them as they are done. Nothing is decided here."""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator
from pathlib import Path
from typing import TYPE_CHECKING

from infx.errors import printable
from infx.github.actions import append_summary, summary_wanted
from infx.yamlio import atomic_write

if TYPE_CHECKING:  # a local comparison loads neither the GitHub edge nor the other uses
    from infx.history.changes import ChangesOutcome
    from infx.results.compare.facts import Reader
    from infx.results.compare.rules import CompareOutcome, Reporting
    from infx.results.ingest.collect import Collected

Line = tuple[str, bool]  # (text, to stderr)


def _stderr(lines: Iterable[str]) -> Iterator[Line]:
    """Lines for stderr, which quote input (a path, a config key, an API's answer): their
    control and bidirectional characters escaped, as infx prints errors."""
    return ((printable(line), True) for line in lines)


def collected(out_dir: Path, done: Collected) -> Iterator[Line]:
    """Warnings; then the run's tables written into `out_dir`, the summary, what it says."""
    yield from _stderr(done.warnings)
    out_dir.mkdir(parents=True, exist_ok=True)
    for name, data in done.files.items():
        atomic_write(out_dir / name, data)
    append_summary(done.summary)
    yield "\n".join(done.said), False


def compared(github: Callable[[], Reader], how: Reporting, done: CompareOutcome) -> Iterator[Line]:
    """Notes; then (with something compared) --out, the summary, stdout, the comment and
    check run, the verdict record; the failure last."""
    yield from _stderr(done.notes)
    if done.report is None:
        if done.stdout:
            yield done.stdout, False
    else:
        if how.out is not None:
            atomic_write(how.out, done.comment.encode())
        if how.verdict_out is not None:
            how.verdict_out.parent.mkdir(parents=True, exist_ok=True)
            atomic_write(how.verdict_out, done.verdict.encode())
        if summary_wanted():  # rendered only when written
            append_summary(done.summary)
        yield done.stdout, False
        if how.pr is not None or done.check is not None:
            from infx.results.compare.facts import publish  # the GitHub edge, when used

            yield from _stderr(publish(github, how, done))
        if done.record is not None and done.record_to is not None:
            from infx.history.verdicts import save  # SQLAlchemy, when a verdict is kept

            yield from _stderr([save(done.record_to, done.record)])
    if done.failure:
        yield from _stderr([done.failure])


def changed(github: Callable[[], Reader], done: ChangesOutcome) -> Iterator[Line]:
    """Warnings, the summary, stdout, then the issues opened."""
    yield from _stderr(done.warnings)
    append_summary(done.markdown)
    yield done.stdout, False
    from infx.results.compare.facts import open_issues  # the GitHub edge

    yield from _stderr(open_issues(github, done.issues, done.label))
