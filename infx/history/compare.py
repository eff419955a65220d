"""The `compare` use case: this run's table against main's history, read where the request
says (a folder or the database here, the API through `infx.results.facts`), judged by the
noise model, acknowledged when a maintainer waved it through, composed into an outcome.
Nothing is written or posted here; the command does that with what this returns."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

from infx.history.sources import stored_history
from infx.results import facts
from infx.results.comparison import (
    CompareOutcome,
    CompareRequest,
    HistorySource,
    MainHistory,
    acknowledging_pr,
    nothing_to_compare,
    outcome,
    without_own_run,
)
from infx.results.files import load_results
from infx.results.repeats import same_head
from infx.results.report import acknowledged
from infx.results.verdict import compare as judge
from infx.settings import Settings


def this_run(env: Mapping[str, str]) -> int | None:
    """The workflow run this command runs in, if any (the comment names it)."""
    run_id = env.get("GITHUB_RUN_ID", "")
    return int(run_id) if run_id.isdigit() else None


def compare(
    request: CompareRequest,
    settings: Settings,
    env: Mapping[str, str],
    github: Callable[[], facts.Reader],
) -> CompareOutcome:
    """Judge the request's table against main's history. `github` gives the API client,
    asked for only when the history or an acknowledgement must come through the API."""
    source = request.source.checked(settings)
    ack_label = request.reporting.ack_label or settings.results.acknowledge_label
    table = load_results(request.current)
    rows = table["rows"]
    if not rows:
        return nothing_to_compare(request.current)
    more = [load_results(p) for p in request.repeats]
    same_head([table, *more], [str(p) for p in (request.current, *request.repeats)])
    history = _history(source, table, more, github)
    report = judge(
        rows,
        history.docs,
        request.threshold,
        trimmed=request.trimmed,
        repeats=[t["rows"] for t in more],
    )
    run_id = this_run(env)
    pr = acknowledging_pr(request, report)
    if pr is not None:
        bot = request.reporting.bot_login
        ack = facts.read_acknowledgement(github(), pr, ack_label, bot, run_id)
        report = acknowledged(report, ack)
    plots = None
    if request.reporting.plots is not None:
        from infx.results.plot import draw

        plots = len(draw(report, request.reporting.plots))
    return outcome(request, report, history, ack_label=ack_label, plots=plots, run_id=run_id)


def _history(
    source: HistorySource,
    table: dict[str, Any],
    more: list[dict[str, Any]],
    github: Callable[[], facts.Reader],
) -> MainHistory:
    rows = table["rows"] + [r for t in more for r in t["rows"]]
    if source.where is not None:
        found = stored_history(source.where, rows, source.runs or 1)
        return without_own_run(found, table, *more)
    if source.baseline is not None:
        return MainHistory([load_results(source.baseline)], f"one table, `{source.baseline.name}`")
    return facts.main_history(github(), rows, source)
