"""The `compare` use case: this run's table against main's history, read where the request
says (a folder or the database here, the API through `infx.results.compare.facts`), judged by the
noise model, acknowledged when a maintainer waved it through, composed into an outcome.
Nothing is written or posted here; the command does that with what this returns."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import replace
from pathlib import Path
from typing import TYPE_CHECKING, Any

from infx.history.sources import history_url, stored_history
from infx.results.compare.rules import (
    CompareOutcome,
    CompareRequest,
    HistorySource,
    MainHistory,
    acknowledging_pr,
    nothing_to_compare,
    outcome,
    verdict_record,
    without_own_run,
)
from infx.results.ingest.files import load_results
from infx.results.verdict.gate import Acknowledgement, verdict_digest
from infx.results.verdict.judge import compare as judge
from infx.results.verdict.repeats import same_head
from infx.results.verdict.report import Report, acknowledged
from infx.settings import Settings

if TYPE_CHECKING:  # the GitHub edge loads when the API is read
    from infx.results.compare.facts import Reader


def this_run(env: Mapping[str, str]) -> int | None:
    """The workflow run this command runs in, if any (the comment names it)."""
    run_id = env.get("GITHUB_RUN_ID", "")
    return int(run_id) if run_id.isdigit() else None


def compare(
    request: CompareRequest,
    settings: Settings,
    env: Mapping[str, str],
    github: Callable[[], Reader],
) -> CompareOutcome:
    """Judge the request's table against main's history. `github` gives the API client,
    asked for only when the history or an acknowledgement must come through the API."""
    source = request.source.checked(settings)
    ack_label = request.reporting.ack_label or settings.results.acknowledge_label
    table = load_results(request.current)
    rows = table["rows"]
    if not rows:
        return nothing_to_compare(request)
    more = [load_results(p) for p in request.repeats]
    same_head([table, *more], [str(p) for p in (request.current, *request.repeats)])
    history = _history(source, table, more, github)
    report = judge(
        rows,
        history.frame,
        request.threshold,
        trimmed=request.trimmed,
        repeats=[t["rows"] for t in more],
    )
    run_id = this_run(env)
    pr = acknowledging_pr(request, report)
    found = None
    if pr is not None:
        how = request.reporting
        from infx.results.compare.facts import read_acknowledgement

        found = read_acknowledgement(github(), pr, ack_label, how.bot_login, report, how.check_sha)
        report = acknowledged(report, found.ack)
    plots: int | None = None
    failed: tuple[str, ...] = ()
    if request.reporting.plots is not None:
        plots, failed = _plots(report, request.reporting.plots)
    done = outcome(
        request,
        report,
        history,
        ack_label=ack_label,
        plots=plots,
        run_id=run_id,
        plot_failures=failed,
        acknowledgement=found,
        site_url=settings.results.site_url,
    )
    return _recorded(done, request, source, table, found)


def _recorded(
    done: CompareOutcome,
    request: CompareRequest,
    source: HistorySource,
    table: dict[str, Any],
    found: Acknowledgement | None,
) -> CompareOutcome:
    """The verdict as the history's verdicts table keeps it, when a pull request is judged
    against the history database (a folder of tables or the API keep none)."""
    pr, where = request.reporting.pr, source.where
    if pr is None or where is None or Path(where).is_dir() or done.report is None:
        return done
    run = table.get("run") or {}
    head = request.reporting.check_sha or str(run.get("sha") or "")
    digest = found.digest if found is not None else verdict_digest(done.report, head)
    record = verdict_record(pr, run, done.report, head, digest, done.texts.document)
    if record is None:
        return done
    url, _ = history_url(where)
    return replace(done, record=record, record_to=url)


def _plots(report: Report, folder: Path) -> tuple[int, tuple[str, ...]]:
    """Draw the Pareto plots; a plot that cannot be drawn (matplotlib missing, a config it
    chokes on) is said, and never stops the comment, the check run or the gate."""
    from infx.results.render.plot import draw_each

    try:
        written, failed = draw_each(report, folder)
    except Exception as exc:  # the verdict stands without its pictures
        said = str(exc).strip().splitlines()
        return 0, (f"{type(exc).__name__}" + (f": {said[0]}" if said else ""),)
    return len(written), tuple(failed)


def _history(
    source: HistorySource,
    table: dict[str, Any],
    more: list[dict[str, Any]],
    github: Callable[[], Reader],
) -> MainHistory:
    rows = table["rows"] + [r for t in more for r in t["rows"]]
    if source.where is not None:
        found = stored_history(source.where, rows, source.runs or 1)
        return without_own_run(found, table, *more)
    if source.baseline is not None:
        return MainHistory.of_documents(
            [load_results(source.baseline)], f"one table, `{source.baseline.name}`"
        )
    from infx.results.compare.facts import main_history

    return main_history(github(), rows, source)
