"""The PR comment `infx results compare` posts (and its job summary and check run).

Every string that comes from data (model names, runners, images, tasks) goes through
`text`, so a table pipe, HTML, a mention or a comment opener in a results file reaches
GitHub as plain characters.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from functools import cached_property
from typing import TYPE_CHECKING

from infx.markdown import EMPTY, Align, Md, code, table, text
from infx.results.render import model as words
from infx.results.render.cells import (
    MARK,
    WORD,
    number,
    run_link,
    score_cell,
    verdict_text,
    word_of,
)
from infx.results.render.model import curve_cell, method, sweep_line
from infx.results.table.metrics import CHECKS
from infx.results.table.rows import metrics_of
from infx.results.verdict.gate import shown_line
from infx.results.verdict.report import Check, Config, Curve, Point, Report, Score
from infx.results.verdict.words import (
    COMPARED,
    COVERAGE_LOST,
    IMPROVED,
    MISSING,
    NEW,
    NOISE,
    REGRESSED,
    UNKNOWN,
)

if TYPE_CHECKING:
    from infx.github.values import Comment

MARKER = "<!-- infx:results-compare -->"
# GitHub refuses comment bodies over 65,536 characters and step summaries over 1 MiB.
COMMENT_LIMIT = 60_000
CHECK_LIMIT = 60_000  # a check run's summary holds at most 65,535 characters
ACK_COMMAND = "/ack-regression"


def sticky(comments: Iterable[Comment], bot_login: str) -> Comment | None:
    """The oldest comment by the bot that starts with the marker: the one to edit. Others'
    comments quoting the marker are never taken (the token could not edit them anyway)."""
    mine = [c for c in comments if c.author == bot_login and c.body.lstrip().startswith(MARKER)]
    return min(mine, key=lambda c: (c.created_at, c.id)) if mine else None


def _scaled(check: Check, value: float | None) -> float | None:
    return None if value is None else value * check.metric.scale


def _cell(check: Check) -> Md:
    body = f"{number(_scaled(check, check.before))} → {number(_scaled(check, check.after))}"
    if check.change_pct is not None:
        body += f" ({check.change_pct:+.1f}%"
        if check.band_pct is not None and check.verdict != UNKNOWN:
            body += f" ±{check.band_pct:.1f}"
        body += ")"
    mark = MARK.get(check.verdict) if check.verdict in (IMPROVED, REGRESSED) else None
    return Md(f"{body} {mark}" if mark else body)


def _one_side(value: float | None, scale: float, side: str) -> Md:
    shown = number(None if value is None else value * scale)
    return Md(f"{shown} → –" if side == "main" else f"– → {shown}")


def _point_row(point: Point) -> list[Md]:
    shown = [*CHECKS, None]
    if point.status == COMPARED:
        cells = [_cell(c) for c in point.checks]
    else:
        side = "main" if point.status == MISSING else "pr"
        row = point.main if side == "main" else point.pr
        metrics = metrics_of(row)
        cells = []
        for metric in shown:
            if metric is None:
                value = metrics.get("median_intvty", metrics.get("mean_intvty"))
                cells.append(_one_side(value, 1.0, side))
            else:
                cells.append(_one_side(metrics.get(metric.key), metric.scale, side))
    return [Md(str(point.conc)), verdict_text(point.verdict), *cells]


def _points_table(points: Iterable[Point]) -> str:
    labels = [f"{c.label} ({c.unit})" for c in CHECKS] + ["Interactivity (tok/s/user)"]
    headers = ["Conc", "Verdict", *labels]
    align: list[Align] = ["left"] * len(headers)
    align[0] = "right"
    return table(headers, map(_point_row, points), align)


def _score_row(s: Score) -> list[Md]:
    metric = f"{s.metric} ({s.filter})" if s.filter != "none" else s.metric
    if s.status == COMPARED and s.before is not None and s.after is not None:
        word = "within stderr" if s.verdict == NOISE else WORD.get(s.verdict, s.verdict)
        mark = MARK.get(s.verdict, "") if s.verdict != NOISE else "⚪"
        change = f"{s.after - s.before:+.4f} {mark} {word}".replace("  ", " ")
    else:
        change = verdict_text(s.status)
    return [
        Md(str(s.conc)),
        text(s.task),
        text(metric),
        score_cell(s.before, s.before_stderr),
        score_cell(s.after, s.after_stderr),
        Md(change),
    ]


def _curve(curve: Curve | None) -> Md:

    mark = ""
    if curve is not None and curve.verdict in (IMPROVED, REGRESSED):
        mark = MARK.get(curve.verdict, "")
    return curve_cell(curve, mark)


def _counts(config: Config) -> str:
    c = config.count
    return f"{c(IMPROVED)} / {c(REGRESSED)} / {c(NOISE)} / {c(NEW)} / {c(MISSING)}"


def config_section(config: Config, threshold: float = 2.0) -> str:

    lines = [f"### {text(config.label)}: {verdict_text(config.verdict)}\n\n"]
    if config.only_main:
        lines.append(
            f"Main's newest run {run_link(config.baseline)} measured this config; this run "
            "did not, so publishing it drops the curve below.\n\n"
        )
    else:
        runs = f"{config.runs} main run(s), newest {run_link(config.baseline)}"
        if config.loo is not None and config.loo[0]:
            runs += f"; of {config.loo[0]} judged as PRs against the others, {config.loo[1]} failed"
        lines.append(f"History: {runs if config.runs else 'none (every point is new)'}.")
        for what, measure in (
            ("at equal concurrency", config.level),
            ("at matched interactivity", config.curve),
        ):
            if measure is not None:
                mark = MARK.get(measure.verdict, "")
                mark = mark if measure.verdict in (IMPROVED, REGRESSED) else ""
                word = word_of(measure.verdict)
                lines.append(words.curve_sentence(what, measure, word, mark))
        lines.append(words.moved_lines(config))
        lines.append(words.repeats_sentence(config, threshold))
        lines.append(words.power_sentence(config))
        lines.append("\n\n")
    if config.points:
        lines.append(_points_table(config.points))
    if config.scores:
        if config.points:
            lines.append("\n")
        headers = ["Conc", "Task", "Metric", "main", "PR", "Change"]
        align: list[Align] = ["right", "left", "left", "left", "left", "left"]
        lines.append(table(headers, map(_score_row, config.scores), align))
    return "".join(lines) + "\n"


@dataclass(frozen=True)
class Context:
    """What the comment says about where the numbers came from and how to acknowledge."""

    history: Md | None = None  # how main's history was found
    plots: Md | None = None
    ack_label: str | None = None
    run_id: int | None = None  # this workflow run: the comment names it (acknowledgements)
    verdict_line: Md = EMPTY  # hidden: the failing verdict's digest (infx.results.verdict.gate)
    ack_note: Md = EMPTY  # how to acknowledge this verdict, and what did not count
    overlay: Md = EMPTY  # the link to this PR's overlay on the results site


def headline(report: Report) -> str:
    """One line: the run's verdict and what it rests on, points counted once."""
    total = sum(len(c.points) + len(c.scores) for c in report.configs)
    regressed = report.points(REGRESSED)
    lost = [c for c in report.configs if c.count(MISSING)]  # also when a config regressed
    parts = [f"**{verdict_text(report.verdict)}**"]
    if report.verdict == REGRESSED:
        parts.append(
            f"{regressed} of {total} point(s) regressed in "
            f"{report.configs_with(REGRESSED)} of {len(report.configs)} config(s)"
        )
    if lost:
        missing = sum(c.count(MISSING) for c in lost)
        parts.append(f"coverage lost in {len(lost)} config(s) ({missing} point(s) missing)")
    if report.verdict not in (REGRESSED, COVERAGE_LOST):
        parts.append(f"{total} point(s) in {len(report.configs)} config(s)")
    return ": ".join(parts[:2]) + ("; " + "; ".join(parts[2:]) if len(parts) > 2 else "") + ".\n"


def _tally(report: Report) -> str:
    p = report.points
    return (
        f"Points: {p(IMPROVED)} improved · {p(REGRESSED)} regressed · {p(NOISE)} within noise"
        f" · {p(NEW)} new · {p(MISSING)} missing."
    )


def gate_line(report: Report, context: Context) -> str:
    if not report.failing:
        return "Gate: passes."
    if report.ack is not None:
        who = text(report.ack.who)
        label = f"label {code(context.ack_label)} added" if context.ack_label else "label"
        how = Md(f"{label} by {who}" if report.ack.by == "label" else f"`{ACK_COMMAND}` by {who}")
        return f"Gate: passes, acknowledged ({how})."
    if context.ack_note:
        return f"Gate: **fails**. {context.ack_note}"
    how = Md(f"add the label {code(context.ack_label)} or ") if context.ack_label else EMPTY
    return (
        f"Gate: **fails**. To merge anyway, {how}comment `{ACK_COMMAND}` "
        "(write access), then re-run this job."
    )


def _method(report: Report) -> str:

    return method(report)


def _summary_table(report: Report) -> str:
    headers = ["Config", "Verdict", "Points ↑ / ↓ / = / new / missing"]
    headers += ["Throughput/GPU, equal conc", "at matched interactivity"]
    rows = [
        [text(c.label), verdict_text(c.verdict), Md(_counts(c)), _curve(c.level), _curve(c.curve)]
        for c in report.configs
    ]
    return table(headers, rows)


def comment(report: Report, context: Context, limit: int = COMMENT_LIMIT) -> str:
    """The sticky PR comment: marker, headline, gate, one line per config, then details.

    Configs come worst first; detail sections that would pass `limit` are left out and
    counted, so the body always fits.
    """
    return Comments(report, context).at(limit)


class Comments:
    """The comment at any limit (the PR's, the job summary's, the check run's), each made
    when first asked for; its head, tail and config sections rendered once for all of
    them, a section only when some limit reaches it (the sections of 2,000 configs past a
    comment's limit are never rendered)."""

    def __init__(self, report: Report, context: Context) -> None:
        self._report, self._context = report, context
        self._made: dict[int, str] = {}
        self._sections: dict[int, str] = {}

    @cached_property
    def _head(self) -> str:
        return _head(self._report, self._context)

    @cached_property
    def _tail(self) -> str:
        return _tail(self._report, self._context)

    def _section(self, n: int) -> str:
        found = self._sections.get(n)
        if found is None:
            found = self._sections[n] = config_section(
                self._report.configs[n], self._report.threshold
            )
        return found

    def at(self, limit: int) -> str:
        found = self._made.get(limit)
        if found is None:
            count = len(self._report.configs)
            found = _fitted(self._head, self._section, count, self._tail, limit)
            self._made[limit] = found
        return found


def _head(report: Report, context: Context) -> str:
    """Marker, hidden lines, headline, gate, where main's history came from, the summary."""
    head = [MARKER]
    if context.run_id is not None:
        ack = report.ack.comment_id if report.ack is not None else None
        head.append("\n" + shown_line(context.run_id, ack))
    if context.verdict_line:
        head.append("\n" + context.verdict_line)
    head += [
        "\n## Benchmark results against main\n\n",
        headline(report),
        "\n",
        gate_line(report, context),
        " ",
        _tally(report),
        "\n\n",
    ]
    if context.history:
        head.append(f"Main's history: {context.history}.\n\n")
    from infx.results.render.model import calibration_line, pairs_line

    head.append(calibration_line(report))
    head.append(pairs_line(report))
    if context.overlay:
        head.append(f"{context.overlay}\n\n")

    head.append(sweep_line(report))
    if report.configs:
        head.append(_summary_table(report) + "\n")
    return "".join(head)


def _tail(report: Report, context: Context) -> str:
    """How the verdict was reached, the plots, the notes."""
    tail = [_method(report) + "\n"]
    if context.plots:
        tail.append(
            f"\nPareto plots (throughput per GPU against interactivity): {context.plots}.\n"
        )
    for note in report.notes:
        tail.append(f"\nNote: {text(note)}\n")
    return "".join(tail)


def _fitted(head: str, section_of: Callable[[int], str], count: int, tail: str, limit: int) -> str:
    """Head, the first of the `count` config sections that fit in `limit` (the others
    counted), tail."""
    body = head
    budget = limit - len(body) - len(tail) - 200
    left_out = 0
    for n in range(count):
        if left_out:  # once one is left out, the rest are (worst first): none is rendered
            left_out += 1
            continue
        section = section_of(n)
        if len(section) > budget:
            left_out += 1
            continue
        body += section
        budget -= len(section)
    if left_out:
        body += f"_{left_out} more config(s) not detailed here; the job summary lists them._\n\n"
    if len(body) + len(tail) > limit:  # the one-line table alone is too long
        body = body[: limit - len(tail) - 80] + "\n\n_Cut to fit a comment._\n\n"
    return body + tail


def check_output(report: Report, body: str) -> tuple[str, str, str]:
    """(conclusion, title, summary) of the `infx/results` check run; `body` is the comment
    at CHECK_LIMIT."""
    title = headline(report).strip().replace("**", "")
    title = re.sub(r"^\S+ ", "", title) if title[:1] in "🔴🟠🟢⚪🆕" else title
    conclusion = "success" if report.passed else "failure"
    return conclusion, title[:200], body.replace(MARKER + "\n", "", 1)
