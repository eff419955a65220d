"""`infx results compare` as values: what to compare, against which history, how to report,
and what comes out (the report, the comment, the check run, the JSON, the exit code).

Pure: the history and the acknowledgement arrive already read (`infx.history.sources`,
`infx.results.compare.facts`); `infx.history.compare` reads them and calls these rules in order.
NumPy is not imported here, so a missing `compare` extra is said in one line first.
"""

from __future__ import annotations

import importlib.util
import json
from collections.abc import Callable, Mapping
from dataclasses import Field, dataclass, field, fields, replace
from datetime import UTC, datetime
from functools import cached_property
from pathlib import Path
from typing import TYPE_CHECKING, Any, ClassVar, Protocol, TypeVar

from infx.errors import UsageError
from infx.markdown import EMPTY, Md, code, link, text
from infx.results.render.cells import SUMMARY_LIMIT
from infx.results.render.comment import (
    CHECK_LIMIT,
    COMMENT_LIMIT,
    Comments,
    Context,
    check_output,
)
from infx.results.table.rows import RunInfo, Table, run_of
from infx.results.verdict.gate import Acknowledgement, ack_note, verdict_digest, verdict_line
from infx.results.verdict.report import Report
from infx.results.verdict.words import NEW
from infx.settings import SWEEP_WORKFLOW, Settings

if TYPE_CHECKING:  # NumPy loads with the history, after require_stats
    from infx.results.table.frame import Frame


class _Dataclass(Protocol):
    """Any dataclass (what `dataclasses.fields` takes)."""

    __dataclass_fields__: ClassVar[dict[str, Field[Any]]]


T = TypeVar("T", bound=_Dataclass)
CHECK_NAME = "infx/results"
DEFAULT_BOT = "github-actions[bot]"
DEFAULT_WORKFLOW = SWEEP_WORKFLOW
STATS = ("numpy",)


def require_stats() -> None:
    """The noise model needs NumPy (its t and change points are written on it alone)."""
    missing = [m for m in STATS if importlib.util.find_spec(m) is None]
    if missing:
        raise UsageError(
            f"comparing results needs {', '.join(missing)}: pip install 'infx[compare]'"
        )


@dataclass(frozen=True)
class HistorySource:
    """Against which of main's history: its runs through the API (the default), a folder
    of tables or the history database (`where`), one table, or one run's table."""

    where: str | None = None  # --history DIR|URL
    baseline: Path | None = None
    baseline_run: int | None = None
    runs: int | None = None  # None: history-runs in infx.toml [results]
    workflow: str = DEFAULT_WORKFLOW
    branch: str | None = None  # None: main-branch in infx.toml
    budget: int | None = None  # None: runs + 6

    def checked(self, settings: Settings) -> HistorySource:
        """The source with the settings' defaults filled in; a usage error when it names
        two sources."""
        given = (self.baseline, self.baseline_run, self.where)
        if sum(x is not None for x in given) > 1:
            raise UsageError("--baseline, --baseline-run and --history exclude each other")
        return replace(
            self,
            runs=self.runs or settings.results.history_runs,
            branch=self.branch or settings.main_branch,
        )

    @property
    def api_runs(self) -> int:
        """Main runs the API search reads: one for a pinned run."""
        return 1 if self.baseline_run is not None else self.runs or 1


@dataclass(frozen=True)
class Reporting:
    """How to report: stdout's format, the PR's sticky comment, the check run, plots."""

    output_format: str = "text"  # text | json
    pr: int | None = None
    check_sha: str | None = None
    ack_label: str | None = None  # None: acknowledge-label in infx.toml [results]
    bot_login: str = DEFAULT_BOT
    plots: Path | None = None
    plots_artifact: str = "results_compare"
    out: Path | None = None
    verdict_out: Path | None = None  # also the verdict JSON (what a repeat is planned from)


@dataclass(frozen=True)
class CompareRequest:
    current: Path  # this run's results table or folder
    source: HistorySource
    reporting: Reporting
    threshold: float = 2.0
    trimmed: bool = False
    repeats: tuple[Path, ...] = ()  # more runs of the same head, pooled with `current`
    false_fail: float | None = None  # None: false-fail in infx.toml [results]
    # main's image measured beside this PR's runs, one each (paired A/B; docs/results.md)
    baseline_repeats: tuple[Path, ...] = ()

    @classmethod
    def of(cls, options: Mapping[str, object]) -> CompareRequest:
        """The request from `results compare`'s options, each named as the field it fills."""
        source, reporting = _filled(HistorySource, options), _filled(Reporting, options)
        return _filled(cls, {**options, "source": source, "reporting": reporting})

    def checked(self, settings: Settings) -> CompareRequest:
        """The request with the settings' defaults filled in (the history source, the
        acknowledge label); a usage error when it names two sources."""
        label = self.reporting.ack_label or settings.results.acknowledge_label
        return replace(
            self,
            source=self.source.checked(settings),
            reporting=replace(self.reporting, ack_label=label),
        )

    def acknowledging(self, report: Report) -> int | None:
        """The pull request whose acknowledgements to read: only a failing gate on one is
        worth reading them for."""
        return self.reporting.pr if report.failing else None


def _filled(kind: type[T], options: Mapping[str, object]) -> T:
    """A dataclass whose fields take the options of the same names (typed by click)."""
    make: Callable[..., T] = kind
    return make(**{field.name: options[field.name] for field in fields(kind)})


@dataclass(frozen=True)
class MainHistory:
    """Main's runs (oldest first) as a frame of their numbers, and how they were found."""

    frame: Frame
    described: Md  # for the comment: "3 run(s) from `history`" and the like
    search: str | None = None  # the API search's account, said on stderr

    @classmethod
    def of_documents(
        cls, docs: list[Table], described: Md, search: str | None = None
    ) -> MainHistory:
        """Main's runs read as results documents (a folder, the API, one table)."""
        from infx.results.table.frame import of_documents

        return cls(of_documents(docs), described, search)


def without_own_run(history: MainHistory, *tables: Table) -> MainHistory:
    """This run's own tables (and its repeats') inside a --history folder or database are
    never its baseline. A run of main's is this run's own only when the table names its
    commit too: a PR's table that named main's run ids took those runs out of main's
    history (and with it, on a short history, the gate's power)."""
    claims = {
        (i, run_of(t).get("sha")) for t in tables if isinstance(i := run_of(t).get("id"), int)
    }
    own = {run["id"] for run in history.frame.runs if (run.get("id"), run.get("sha")) in claims}
    if not own:
        return history
    left = ", ".join(str(i) for i in sorted(own))
    said = Md(f"{history.described}; this run's own table ({text(left)}) left out")
    return MainHistory(history.frame.without_runs(own), said)


def api_history(docs: list[Table], branch: str, account: str) -> MainHistory:
    """Main's runs the API search found (oldest first), and its account of the search."""
    described = Md(f"{len(docs)} successful {text(branch)} run(s) read through the API")
    if not docs:
        described = Md(f"none found ({text(account)})")
    return MainHistory.of_documents(docs, described, f"history search: {account}")


@dataclass(frozen=True)
class Verdict:
    """A judged pull request run attempt, as the history's verdicts table keeps it."""

    pr: int
    run_id: int
    attempt: int
    head_sha: str
    verdict: str
    passed: bool
    digest: str
    document: dict[str, Any]  # the verdict JSON (schemas/results-verdict.schema.json)
    ack_by: str | None = None  # label | comment
    ack_who: str | None = None
    ack_at: datetime | None = None  # UTC, naive
    reused_by: int | None = None  # the main run that republished this run's sweep
    judged_at: datetime | None = None  # UTC, naive; None: when it is recorded


def verdict_record(
    pr: int, run: RunInfo, report: Report, head: str, digest: str, document: dict[str, Any]
) -> Verdict | None:
    """The row the verdicts table keeps of this comparison (`document`: its verdict JSON),
    when the table names its run."""
    run_id, attempt = run.get("id"), run.get("attempt", 1)
    if not isinstance(run_id, int) or not isinstance(attempt, int):
        return None
    ack = report.ack
    at = ack.at.astimezone(UTC).replace(tzinfo=None) if ack and ack.at else None
    return Verdict(
        pr=pr,
        run_id=run_id,
        attempt=attempt,
        head_sha=head,
        verdict=report.verdict,
        passed=report.passed,
        digest=digest,
        document=document,
        ack_by=ack.by if ack else None,
        ack_who=ack.who if ack else None,
        ack_at=at,
    )


@dataclass(frozen=True)
class CheckRun:
    name: str
    sha: str
    conclusion: str
    title: str
    summary: str


def encoded(document: dict[str, Any]) -> str:
    """A verdict document as JSON text: compact (a 2,000-row verdict is megabytes; indented,
    nearly twice that, and encoded by Python's slow path)."""
    return json.dumps(document, separators=(",", ":"))


@dataclass(frozen=True)
class Texts:
    """What a comparison says, each text made when first read: a job summary nobody
    writes (no GITHUB_STEP_SUMMARY) is never rendered, the verdict document once for
    stdout, --verdict-out and the verdicts table."""

    report: Report | None = None
    bodies: Comments | None = None  # the comment at each limit
    json_out: bool = False  # stdout is the verdict as JSON, not the comment
    said: str = ""  # stdout when nothing was compared

    @property
    def comment(self) -> str:
        return self.bodies.at(COMMENT_LIMIT) if self.bodies is not None else ""

    @property
    def summary(self) -> str:
        return self.bodies.at(SUMMARY_LIMIT) + "\n" if self.bodies is not None else ""

    @cached_property
    def document(self) -> dict[str, Any]:
        return _verdict_json(self.report) if self.report is not None else {}

    @cached_property
    def verdict(self) -> str:
        return encoded(self.document) if self.report is not None else ""

    @property
    def stdout(self) -> str:
        if self.report is None:
            return self.said
        return self.verdict if self.json_out else self.comment


@dataclass(frozen=True)
class CompareOutcome:
    """What a comparison says and where: the commands write, print and post it."""

    notes: tuple[str, ...] = ()  # stderr, before anything else
    report: Report | None = None  # None: nothing to compare
    texts: Texts = field(default_factory=Texts)
    check: CheckRun | None = None
    failure: str | None = None  # the gate fails: said on stderr, exit 1
    record: Verdict | None = None  # for the history's verdicts table
    record_to: str | None = None  # the history to record it in

    @property
    def comment(self) -> str:
        """The sticky comment's Markdown (and --out's)."""
        return self.texts.comment

    @property
    def summary(self) -> str:
        """The job summary."""
        return self.texts.summary

    @property
    def stdout(self) -> str:
        """The comment, or the verdict as JSON."""
        return self.texts.stdout

    @property
    def verdict(self) -> str:
        """The verdict as JSON (--verdict-out)."""
        return self.texts.verdict

    @property
    def exit_code(self) -> int:
        return 1 if self.failure else 0


@dataclass(frozen=True)
class Judgement:
    """A comparison judged: this run's table, its report (acknowledged, when it was), the
    history it was judged against, the acknowledgement read, and the plots drawn (None:
    none asked for; `plot_failures` the ones that could not be, said, never failing it)."""

    table: Table
    report: Report
    history: MainHistory
    acknowledgement: Acknowledgement | None = None
    plots: int | None = None
    plot_failures: tuple[str, ...] = ()


def outcome(
    request: CompareRequest,
    judged: Judgement,
    *,
    run_id: int | None = None,
    site_url: str | None = None,
    record_to: str | None = None,
) -> CompareOutcome:
    """The comment, summary, stdout, check run, verdict record and exit of a judged
    comparison (`request` checked), in one pass: the comment's sections and the verdict's
    JSON are made once, for every place that shows them, and each only when something
    reads it (`Texts`). `record_to`: the history database that keeps the verdict of a pull
    request's run (None: none does, and the comment links no overlay: the site builds a
    PR's overlay from its recorded verdict)."""
    how, report = request.reporting, judged.report
    # The overlay is built from the recorded verdict: no record, no page to link.
    context = _context(request, judged, run_id, site_url if record_to is not None else None)
    bodies = Comments(report, context)
    texts = Texts(report, bodies, json_out=how.output_format == "json")
    check = None
    if how.check_sha:
        conclusion, title, summary = check_output(report, bodies.at(CHECK_LIMIT))
        check = CheckRun(CHECK_NAME, how.check_sha, conclusion, title, summary)
    record = None
    if how.pr is not None and record_to is not None:
        run = run_of(judged.table)
        head = how.check_sha or str(run.get("sha") or "")
        found = judged.acknowledgement
        digest = found.digest if found is not None else verdict_digest(report, head)
        record = verdict_record(how.pr, run, report, head, digest, texts.document)
    failure = None
    if not report.passed:
        failure = f"infx: results gate fails: {report.verdict.replace('-', ' ')}"
    warnings = tuple(f"infx: warning: plot not drawn: {why}" for why in judged.plot_failures)
    search = judged.history.search
    return CompareOutcome(
        notes=((search,) if search else ()) + warnings,
        report=report,
        texts=texts,
        check=check,
        failure=failure,
        record=record,
        record_to=record_to if record is not None else None,
    )


def _context(
    request: CompareRequest, judged: Judgement, run_id: int | None, site_url: str | None
) -> Context:
    """What the comment says about where the numbers came from and how to acknowledge."""
    how, report = request.reporting, judged.report
    plot_note = None
    if judged.plots is not None:
        failed = f"; {len(judged.plot_failures)} could not be drawn (the job log says why)"
        plot_note = Md(
            f"{judged.plots} PNG(s) in the {code(how.plots_artifact)} artifact"
            + (failed if judged.plot_failures else "")
        )
    context = Context(
        history=judged.history.described, plots=plot_note, ack_label=how.ack_label, run_id=run_id
    )
    if site_url and how.pr is not None:
        where = link(f"#{how.pr} on the results site", overlay_url(site_url, how.pr))
        context = replace(context, overlay=Md(f"This run over main's curves: {where}."))
    found = judged.acknowledgement
    if found is not None:
        line = verdict_line(found.digest, found.since)
        note = ack_note(found, how.ack_label) if report.ack is None else EMPTY
        context = replace(context, verdict_line=line, ack_note=note)
    return context


def _verdict_json(report: Report) -> dict[str, Any]:
    """The verdict as JSON (schemas/results-verdict.schema.json)."""
    # NumPy loads with the verdict's JSON (the noise model's constants): imported here so
    # that `require_stats` says a missing `compare` extra in one line first.
    from infx.results.verdict.document import to_json

    return to_json(report)


def overlay_url(site_url: str, pr: int) -> str:
    """The PR's overlay on the results site (docs/site.md): <site-url>/#/pr/<N>."""
    return f"{site_url.rstrip('/')}/#/pr/{pr}"


def nothing_to_compare(request: CompareRequest) -> CompareOutcome:
    """A table without a row measured nothing, and nothing measured is not a pass: exit 1,
    and in JSON a verdict document saying so (its gate not passed)."""
    said = f"{request.current} holds no results: nothing was measured"
    stdout = ""
    if request.reporting.output_format == "json":
        doc = _verdict_json(Report((), NEW, request.threshold, 0, (said,)))
        doc["gate"]["passed"] = False
        stdout = encoded(doc)
    return CompareOutcome(
        notes=(said,),
        texts=Texts(said=stdout),
        failure=f"infx: results gate fails: {said}",
    )
