"""Markdown for people: the run summary (`collect`) and the PR comment (`compare`).

Every string that comes from data (model names, runners, images, tasks) goes through
`text`, so a table pipe, HTML, a mention or a comment opener in a results file reaches
GitHub as plain characters.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from infx.markdown import Align, Md, table, text
from infx.results.compare import (
    CHECKS,
    COMPARED,
    COVERAGE_LOST,
    IMPROVED,
    MISSING,
    NEW,
    NOISE,
    REGRESSED,
    UNCONFIRMED,
    UNKNOWN,
    config_key,
    config_label,
)

if TYPE_CHECKING:  # the collect job's summary needs neither NumPy nor the noise model
    from infx.github.client import Comment
    from infx.results.report import Check, Config, Curve, Point, Report, Score
    from infx.results.steps import Commits, Range, Step

MARKER = "<!-- infx:results-compare -->"
# GitHub refuses comment bodies over 65,536 characters and step summaries over 1 MiB.
COMMENT_LIMIT = 60_000
SUMMARY_LIMIT = 1_000_000
CHECK_LIMIT = 60_000  # a check run's summary holds at most 65,535 characters
ACK_COMMAND = "/ack-regression"
_MARK = {
    IMPROVED: "🟢",
    REGRESSED: "🔴",
    NOISE: "⚪",
    COVERAGE_LOST: "🟠",
    NEW: "🆕",
    MISSING: "🟠",
    UNCONFIRMED: "🟡",
}
_WORD = {
    IMPROVED: "improved",
    REGRESSED: "regressed",
    NOISE: "within noise",
    COVERAGE_LOST: "coverage lost",
    NEW: "new",
    MISSING: "missing",
    UNCONFIRMED: "unconfirmed",
}


def sticky(comments: Iterable[Comment], bot_login: str) -> Comment | None:
    """The oldest comment by the bot that starts with the marker: the one to edit. Others'
    comments quoting the marker are never taken (the token could not edit them anyway)."""
    mine = [c for c in comments if c.author == bot_login and c.body.lstrip().startswith(MARKER)]
    return min(mine, key=lambda c: (c.created_at, c.id)) if mine else None


def number(value: float | None) -> str:
    if value is None:
        return "–"
    if abs(value) >= 999.5:
        return f"{value:,.0f}"
    if value == 0:
        return "0"
    return f"{value:.4g}"


def _scaled(check: Check, value: float | None) -> float | None:
    return None if value is None else value * check.metric.scale


def _cell(check: Check) -> Md:
    body = f"{number(_scaled(check, check.before))} → {number(_scaled(check, check.after))}"
    if check.change_pct is not None:
        body += f" ({check.change_pct:+.1f}%"
        if check.band_pct is not None and check.verdict != UNKNOWN:
            body += f" ±{check.band_pct:.1f}"
        body += ")"
    mark = _MARK.get(check.verdict) if check.verdict in (IMPROVED, REGRESSED) else None
    return Md(f"{body} {mark}" if mark else body)


def _one_side(value: float | None, scale: float, side: str) -> Md:
    shown = number(None if value is None else value * scale)
    return Md(f"{shown} → –" if side == "main" else f"– → {shown}")


def _run_link(run: dict[str, Any] | None) -> str:
    if not run:
        return "none"
    name = str(run.get("id", "?"))
    url = run.get("url")
    link = (
        f"[{text(name)}](<{url}>)"
        if isinstance(url, str) and url.startswith("https://")
        else text(name)
    )
    sha = run.get("sha")
    return f"{link} (`{text(sha[:7])}`)" if isinstance(sha, str) and sha else link


def _verdict(verdict: str) -> Md:
    return Md(f"{_MARK.get(verdict, '')} {_WORD.get(verdict, verdict)}".strip())


def _point_row(point: Point) -> list[Md]:
    shown = [*CHECKS, None]
    if point.status == COMPARED:
        cells = [_cell(c) for c in point.checks]
    else:
        side = "main" if point.status == MISSING else "pr"
        row = point.main if side == "main" else point.pr
        metrics = (row or {}).get("metrics", {})
        cells = []
        for metric in shown:
            if metric is None:
                value = metrics.get("median_intvty", metrics.get("mean_intvty"))
                cells.append(_one_side(value, 1.0, side))
            else:
                cells.append(_one_side(metrics.get(metric.key), metric.scale, side))
    return [Md(str(point.conc)), _verdict(point.verdict), *cells]


def _points_table(points: Iterable[Point]) -> str:
    labels = [f"{c.label} ({c.unit})" for c in CHECKS] + ["Interactivity (tok/s/user)"]
    headers = ["Conc", "Verdict", *labels]
    align: list[Align] = ["left"] * len(headers)
    align[0] = "right"
    return table(headers, map(_point_row, points), align)


def _score_cell(value: float | None, stderr: float | None) -> Md:
    if value is None:
        return Md("–")
    return Md(f"{value:.4f} ± {stderr:.4f}" if stderr is not None else f"{value:.4f}")


def _score_row(s: Score) -> list[Md]:
    metric = f"{s.metric} ({s.filter})" if s.filter != "none" else s.metric
    if s.status == COMPARED and s.before is not None and s.after is not None:
        word = "within stderr" if s.verdict == NOISE else _WORD.get(s.verdict, s.verdict)
        mark = _MARK.get(s.verdict, "") if s.verdict != NOISE else "⚪"
        change = f"{s.after - s.before:+.4f} {mark} {word}".replace("  ", " ")
    else:
        change = _verdict(s.status)
    return [
        Md(str(s.conc)),
        text(s.task),
        text(metric),
        _score_cell(s.before, s.before_stderr),
        _score_cell(s.after, s.after_stderr),
        Md(change),
    ]


def _curve(curve: Curve | None) -> Md:
    from infx.results.render_model import curve_cell

    mark = ""
    if curve is not None and curve.verdict in (IMPROVED, REGRESSED):
        mark = _MARK.get(curve.verdict, "")
    return curve_cell(curve, mark)


def _counts(config: Config) -> str:
    c = config.count
    return f"{c(IMPROVED)} / {c(REGRESSED)} / {c(NOISE)} / {c(NEW)} / {c(MISSING)}"


def config_section(config: Config, threshold: float = 2.0) -> str:
    from infx.results import render_model as words

    lines = [f"### {text(config.label)}: {_verdict(config.verdict)}\n\n"]
    if config.only_main:
        lines.append(
            f"Main's newest run {_run_link(config.baseline)} measured this config; this run "
            "did not, so publishing it drops the curve below.\n\n"
        )
    else:
        runs = f"{config.runs} main run(s), newest {_run_link(config.baseline)}"
        lines.append(f"History: {runs if config.runs else 'none (every point is new)'}.")
        for what, measure in (
            ("at equal concurrency", config.level),
            ("at matched interactivity", config.curve),
        ):
            if measure is not None:
                mark = _MARK.get(measure.verdict, "")
                mark = mark if measure.verdict in (IMPROVED, REGRESSED) else ""
                word = _word_of(measure.verdict)
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


def _word_of(verdict: str) -> str:
    return _WORD.get(verdict, verdict)


@dataclass(frozen=True)
class Context:
    """What the comment says about where the numbers came from and how to acknowledge."""

    history: str | None = None  # how main's history was found
    plots: str | None = None
    ack_label: str | None = None
    run_id: int | None = None  # this workflow run: the comment names it (acknowledgements)
    verdict_line: str = ""  # hidden: the failing verdict's digest (infx.results.gate)
    ack_note: str = ""  # Markdown: how to acknowledge this verdict, and what did not count
    overlay: str = ""  # Markdown: the link to this PR's overlay on the results site


def headline(report: Report) -> str:
    """One line: the run's verdict and what it rests on, points counted once."""
    total = sum(len(c.points) + len(c.scores) for c in report.configs)
    regressed = report.points(REGRESSED)
    lost = [c for c in report.configs if c.count(MISSING)]  # also when a config regressed
    parts = [f"**{_verdict(report.verdict)}**"]
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
        label = f"label `{text(context.ack_label)}` added" if context.ack_label else "label"
        how = f"{label} by {who}" if report.ack.by == "label" else f"`{ACK_COMMAND}` by {who}"
        return f"Gate: passes, acknowledged ({how})."
    if context.ack_note:
        return f"Gate: **fails**. {context.ack_note}"
    how = f"add the label `{text(context.ack_label)}` or " if context.ack_label else ""
    return (
        f"Gate: **fails**. To merge anyway, {how}comment `{ACK_COMMAND}` "
        "(write access), then re-run this job."
    )


def _method(report: Report) -> str:
    from infx.results.render_model import method

    return method(report)


def _summary_table(report: Report) -> str:
    headers = ["Config", "Verdict", "Points ↑ / ↓ / = / new / missing"]
    headers += ["Throughput/GPU, equal conc", "at matched interactivity"]
    rows = [
        [text(c.label), _verdict(c.verdict), Md(_counts(c)), _curve(c.level), _curve(c.curve)]
        for c in report.configs
    ]
    return table(headers, rows)


def comment(report: Report, context: Context, limit: int = COMMENT_LIMIT) -> str:
    """The sticky PR comment: marker, headline, gate, one line per config, then details.

    Configs come worst first; detail sections that would pass `limit` are left out and
    counted, so the body always fits.
    """
    head = [MARKER]
    if context.run_id is not None:
        from infx.results.gate import shown_line

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
    if context.overlay:
        head.append(f"{context.overlay}\n\n")
    from infx.results.render_model import sweep_line

    head.append(sweep_line(report))
    if report.configs:
        head.append(_summary_table(report) + "\n")
    tail = [_method(report) + "\n"]
    if context.plots:
        tail.append(
            f"\nPareto plots (throughput per GPU against interactivity): {context.plots}.\n"
        )
    for note in report.notes:
        tail.append(f"\nNote: {text(note)}\n")
    body = "".join(head)
    budget = limit - len(body) - len("".join(tail)) - 200
    left_out = 0
    for config in report.configs:
        section = config_section(config, report.threshold)
        if left_out or len(section) > budget:
            left_out += 1
            continue
        body += section
        budget -= len(section)
    if left_out:
        body += f"_{left_out} more config(s) not detailed here; the job summary lists them._\n\n"
    if len(body) + len("".join(tail)) > limit:  # the one-line table alone is too long
        body = body[: limit - len("".join(tail)) - 80] + "\n\n_Cut to fit a comment._\n\n"
    return body + "".join(tail)


def check_output(report: Report, context: Context) -> tuple[str, str, str]:
    """(conclusion, title, summary) of the `infx/results` check run."""
    title = headline(report).strip().replace("**", "")
    title = re.sub(r"^\S+ ", "", title) if title[:1] in "🔴🟠🟢⚪🆕" else title
    conclusion = "success" if report.passed else "failure"
    summary = comment(report, context, CHECK_LIMIT).replace(MARKER + "\n", "", 1)
    return conclusion, title[:200], summary


# --- the run summary (collect) -----------------------------------------------------------


def _summary_cell(row: dict[str, Any], key: str, scale: float = 1.0) -> Md:
    value = row["metrics"].get(key)
    return Md(number(None if value is None else value * scale))


def summary(doc: dict[str, Any], limit: int = SUMMARY_LIMIT) -> str:
    """The run's results table as Markdown, one section per config."""
    rows = doc["rows"]
    lines = ["## Benchmark results\n\n"]
    run = doc.get("run") or {}
    if isinstance(run.get("url"), str) and run["url"].startswith("https://"):
        lines.append(f"Run: <{run['url']}>\n\n")
    lines.append(f"{len(rows)} row(s).\n\n")
    groups: dict[str, list[dict[str, Any]]] = {}
    for row in rows:
        groups.setdefault(config_key(row["identity"]), []).append(row)
    out = "".join(lines)
    left_out = 0
    for members in sorted(groups.values(), key=lambda rows: config_label(rows[0]["identity"])):
        section = _summary_section(members)
        if left_out or len(out) + len(section) > limit - 200:
            left_out += 1
            continue
        out += section
    if left_out:
        out += f"_{left_out} more config(s) not shown; see results.csv._\n"
    return out


def _summary_section(rows_of: list[dict[str, Any]]) -> str:
    out = [f"### {text(config_label(rows_of[0]['identity']))}\n\n"]
    throughput = [r for r in rows_of if r["kind"] == "throughput"]
    if throughput:
        headers = ["Conc", "Throughput/GPU (tok/s)", "Output/GPU (tok/s)", "TTFT p50 (ms)"]
        headers += ["TTFT p99 (ms)", "TPOT p50 (ms)", "TPOT p99 (ms)", "E2EL (s)"]
        headers += ["Interactivity (tok/s/user)"]
        rows = [
            [
                Md(str(r["identity"]["conc"])),
                _summary_cell(r, "tput_per_gpu"),
                _summary_cell(r, "output_tput_per_gpu"),
                _summary_cell(r, "median_ttft", 1000),
                _summary_cell(r, "p99_ttft", 1000),
                _summary_cell(r, "median_tpot", 1000),
                _summary_cell(r, "p99_tpot", 1000),
                _summary_cell(r, "mean_e2el"),
                _summary_cell(r, "median_intvty"),
            ]
            for r in sorted(throughput, key=lambda r: r["identity"]["conc"])
        ]
        out.append(table(headers, rows, ["right"] * len(headers)))
    for r in (r for r in rows_of if r["kind"] == "accuracy"):
        out.append(f"\nAccuracy at conc {r['identity']['conc']}:\n\n")
        scores = [
            [
                text(s["task"]),
                Md(f"{text(s['metric'])} ({text(s['filter'])})"),
                _score_cell(s["value"], s.get("stderr")),
            ]
            for s in r["accuracy"]
        ]
        out.append(table(["Task", "Metric", "Score"], scores, ["left", "left", "right"]))
    return "".join(out) + "\n"


# --- steps on main (changes) --------------------------------------------------------------


def _sha(run: dict[str, Any]) -> str:
    sha = run.get("sha")
    return f"`{text(sha[:7])}`" if isinstance(sha, str) and sha else "?"


def changes_report(
    groups: dict[Range, list[Step]],
    commits: Commits,
    server: str = "",
    repo: str = "",
) -> str:
    """Markdown of the steps found on main, one section per suspect commit range."""
    if not groups:
        return "## Steps on main\n\nNo series changed level in main's newest runs.\n"
    lines = ["## Steps on main\n\n"]
    for key, steps in groups.items():
        good, bad = steps[0].good, steps[0].bad
        lines.append(
            f"### Between run {_run_link(good)} (last good) and run {_run_link(bad)} "
            f"(first changed)\n\n"
        )
        good_sha, bad_sha = good.get("sha"), bad.get("sha")
        if server and repo and isinstance(good_sha, str) and isinstance(bad_sha, str):
            lines.append(f"Commits: <{server}/{repo}/compare/{good_sha}...{bad_sha}>\n\n")
        listed = commits.get(key)
        if listed:
            for sha, subject in listed[:50]:
                lines.append(f"- `{sha[:7]}` {text(subject)}\n")
            if len(listed) > 50:
                lines.append(f"- … {len(listed) - 50} more\n")
            lines.append("\n")
        rows = [
            [
                text(s.label),
                Md(str(s.conc)),
                text(s.metric.label),
                Md(number(s.before * s.metric.scale)),
                Md(number(s.after * s.metric.scale)),
                Md(f"{s.change_pct:+.1f}% {_verdict(s.verdict)}"),
            ]
            for s in sorted(steps, key=lambda s: (s.verdict != "regressed", s.label, s.conc))
        ]
        headers = ["Config", "Conc", "Metric", "Before", "After", "Change"]
        align: list[Align] = ["left", "right", "left", "right", "right", "left"]
        lines.append(table(headers, rows, align) + "\n")
    return "".join(lines)
