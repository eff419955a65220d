"""The `compare` use case: this run's table against main's history, read where the request
says (a folder or the database here, the API through `infx.results.compare.facts`), judged by the
noise model, acknowledged when a maintainer waved it through, composed into an outcome.
Nothing is written or posted here; the command does that with what this returns."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from pathlib import Path
from typing import TYPE_CHECKING

from infx.history.sources import history_url, stored_history
from infx.markdown import Md, code
from infx.numbers import SQLITE_INTEGER_END, decimal
from infx.results.compare.rules import (
    CompareOutcome,
    CompareRequest,
    HistorySource,
    Judgement,
    MainHistory,
    nothing_to_compare,
    outcome,
    without_own_run,
)
from infx.results.ingest.files import load_results
from infx.results.render.plot import draw_each
from infx.results.table.rows import Table
from infx.results.verdict.judge import compare as judge
from infx.results.verdict.repeats import not_mains, pairs, same_head
from infx.results.verdict.report import Report, acknowledged
from infx.settings import Settings

if TYPE_CHECKING:  # the GitHub edge loads when the API is read
    from infx.results.compare.facts import Reader


def this_run(env: Mapping[str, str]) -> int | None:
    """The workflow run this command runs in, if any (the comment names it)."""
    run_id = env.get("GITHUB_RUN_ID", "")
    return decimal(run_id, below=SQLITE_INTEGER_END)


def compare(
    request: CompareRequest,
    settings: Settings,
    env: Mapping[str, str],
    github: Callable[[], Reader],
) -> CompareOutcome:
    """Judge the request's table against main's history. `github` gives the API client,
    asked for only when the history or an acknowledgement must come through the API."""
    asked = request.checked(settings)
    table = load_results(asked.current)
    rows = table["rows"]
    if not rows:
        return nothing_to_compare(asked)
    more = [load_results(p) for p in asked.repeats]
    same_head([table, *more], [str(p) for p in (asked.current, *asked.repeats)])
    beside = [load_results(p) for p in asked.baseline_repeats]
    if beside:
        names = [str(p) for p in (asked.current, *asked.repeats)]
        pairs([table, *more], names, beside, [str(p) for p in asked.baseline_repeats])
    history = _history(asked.source, table, [*more, *beside], github)
    given = [asked.current, *asked.repeats, *asked.baseline_repeats]
    not_mains([table, *more, *beside], [str(p) for p in given], history.frame)
    report = judge(
        rows,
        history.frame,
        asked.threshold,
        trimmed=asked.trimmed,
        repeats=[t["rows"] for t in more],
        q=asked.false_fail or settings.results.false_fail,
        beside=[t["rows"] for t in beside],
    )
    found = None
    pr = asked.acknowledging(report)
    if pr is not None:
        how = asked.reporting
        from infx.results.compare.facts import read_acknowledgement  # the GitHub edge

        found = read_acknowledgement(
            github(), pr, how.ack_label or "", how.bot_login, report, how.check_sha
        )
        report = acknowledged(report, found.ack)
    plots: int | None = None
    failed: tuple[str, ...] = ()
    if asked.reporting.plots is not None:
        plots, failed = _plots(report, asked.reporting.plots)
    judged = Judgement(table, report, history, found, plots, failed)
    return outcome(
        asked,
        judged,
        run_id=this_run(env),
        site_url=settings.results.site_url,
        record_to=_record_to(asked),
    )


def _record_to(request: CompareRequest) -> str | None:
    """The history database that keeps the verdict of a pull request's run: the one it is
    judged against (a folder of tables or the API keep none)."""
    where = request.source.where
    if request.reporting.pr is None or where is None or Path(where).is_dir():
        return None
    url, _ = history_url(where)
    return url


def _plots(report: Report, folder: Path) -> tuple[int, tuple[str, ...]]:
    """Draw the Pareto plots; a plot that cannot be drawn (matplotlib missing, a config it
    chokes on) is said, and never stops the comment, the check run or the gate."""

    try:
        written, failed = draw_each(report, folder)
    except Exception as exc:  # the verdict stands without its pictures
        said = str(exc).strip().splitlines()
        return 0, (f"{type(exc).__name__}" + (f": {said[0]}" if said else ""),)
    return len(written), tuple(failed)


def _history(
    source: HistorySource,
    table: Table,
    more: list[Table],
    github: Callable[[], Reader],
) -> MainHistory:
    rows = table["rows"] + [r for t in more for r in t["rows"]]
    if source.where is not None:
        found = stored_history(source.where, rows, source.runs or 1)
        return without_own_run(found, table, *more)
    if source.baseline is not None:
        said = Md(f"one table, {code(source.baseline.name)}")
        return MainHistory.of_documents([load_results(source.baseline)], said)
    from infx.results.compare.facts import main_history  # the GitHub edge, when it is read

    return main_history(github(), rows, source)
