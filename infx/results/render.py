"""Markdown for people: the run summary (`collect`) and the PR comment (`compare`)."""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

from infx.results.compare import (
    COMPARED,
    IMPROVED,
    METRICS,
    MISSING,
    NEW,
    NOISE,
    REGRESSED,
    Change,
    Comparison,
    ConfigComparison,
    ScoreChange,
    config_key,
    config_label,
)

MARKER = "<!-- infx:results-compare -->"
# GitHub refuses comment bodies over 65,536 characters and step summaries over 1 MiB.
COMMENT_LIMIT = 60_000
SUMMARY_LIMIT = 1_000_000
_MARK = {IMPROVED: "🟢", REGRESSED: "🔴", NOISE: "⚪"}
_WORD = {IMPROVED: "improved", REGRESSED: "regressed", NOISE: "within noise"}


def sticky(comments: Iterable[Any], bot_login: str) -> Any | None:
    """The oldest comment by the bot that starts with the marker: the one to edit. Others'
    comments quoting the marker are never taken (the token could not edit them anyway)."""
    mine = [c for c in comments if c.author == bot_login and c.body.lstrip().startswith(MARKER)]
    return min(mine, key=lambda c: (c.created_at, c.id)) if mine else None


def number(value: float | None) -> str:
    if value is None:
        return "–"
    if abs(value) >= 1000:
        return f"{value:,.0f}"
    if value == 0:
        return "0"
    return f"{value:.4g}"


def _change(change: Change) -> str:
    scale = change.metric.scale
    before = None if change.before is None else change.before * scale
    after = None if change.after is None else change.after * scale
    text = f"{number(before)} → {number(after)}"
    if change.pct is not None:
        text += f" ({change.pct:+.1f}%)"
    mark = _MARK.get(change.verdict)
    return f"{text} {mark}" if mark else text


def _score(value: float | None, stderr: float | None) -> str:
    if value is None:
        return "–"
    return f"{value:.4f} ± {stderr:.4f}" if stderr is not None else f"{value:.4f}"


def _score_change(score: ScoreChange) -> str:
    if score.status != COMPARED or score.before is None or score.after is None:
        return score.status
    word = _WORD.get(score.verdict, "")
    if score.verdict == NOISE:
        word = "within stderr"
    mark = _MARK.get(score.verdict, "")
    return f"{score.after - score.before:+.4f} {mark} {word}".replace("  ", " ").strip()


def _metric_header() -> str:
    cells = ["Conc", *(f"{m.label} ({m.unit})" for m in METRICS)]
    return "| " + " | ".join(cells) + " |\n|---:|" + ":--|" * len(METRICS) + "\n"


def config_section(config: ConfigComparison) -> str:
    lines = [f"### {config.label}\n"]
    lines.append(f"Baseline: {config.baseline or 'none found'}\n\n")
    compared = [p for p in config.points if p.status == COMPARED]
    if compared:
        lines.append(_metric_header())
        for point in compared:
            cells = [str(point.conc), *(_change(c) for c in point.changes)]
            lines.append("| " + " | ".join(cells) + " |\n")
    new = [str(p.conc) for p in config.points if p.status == NEW]
    missing = [str(p.conc) for p in config.points if p.status == MISSING]
    if new:
        lines.append(f"\nNew (no baseline point): conc {', '.join(new)}\n")
    if missing:
        lines.append(f"\nMissing (in the baseline, not measured here): conc {', '.join(missing)}\n")
    if config.scores:
        lines.append(
            "\n| Conc | Task | Metric | main | PR | Change |\n|---:|:--|:--|:--|:--|:--|\n"
        )
        for s in config.scores:
            metric = f"{s.metric} ({s.filter})" if s.filter != "none" else s.metric
            cells = [
                str(s.conc),
                s.task,
                metric,
                _score(s.before, s.before_stderr),
                _score(s.after, s.after_stderr),
                _score_change(s),
            ]
            lines.append("| " + " | ".join(cells) + " |\n")
    return "".join(lines) + "\n"


@dataclass(frozen=True)
class Context:
    """What the comment says about where the numbers came from."""

    baselines: tuple[str, ...] = ()
    plots: str | None = None
    searched: str | None = None


def _headline(comparison: Comparison) -> str:
    c = comparison.count
    points = sum(len(cfg.points) for cfg in comparison.configs)
    parts = [
        f"**{c(IMPROVED)} improved, {c(REGRESSED)} regressed, {c(NOISE)} within noise** "
        f"(threshold ±{comparison.threshold:g}%; accuracy: 1.96 standard errors)",
        f"{len(comparison.configs)} config(s), {points} point(s): "
        f"{c(NEW)} new, {c(MISSING)} missing",
    ]
    return "; ".join(parts) + ".\n"


def comment(comparison: Comparison, context: Context, limit: int = COMMENT_LIMIT) -> str:
    """The sticky PR comment: a hidden marker, a headline, then one section per config.

    Configs with a regression come first; sections that would pass `limit` are left
    out and counted, so the body always fits.
    """
    head = [MARKER, "\n## Benchmark results against main\n\n", _headline(comparison), "\n"]
    if context.baselines:
        head.append("Baselines: " + "; ".join(context.baselines) + ".\n\n")
    elif context.searched:
        head.append(f"No baseline found: {context.searched}.\n\n")
    tail = [
        "🟢 improved · 🔴 regressed · ⚪ within noise. Means per request; throughput per GPU "
        "counts every GPU of the job (multi-node: output per decode GPU, input per prefill "
        "GPU); interactivity is 1000 / TPOT in ms.\n"
    ]
    if context.plots:
        tail.append(
            f"\nPareto plots (throughput per GPU against interactivity): {context.plots}.\n"
        )
    for note in comparison.notes:
        tail.append(f"\nNote: {note}\n")
    body = "".join(head)
    budget = limit - len(body) - len("".join(tail)) - 200
    left_out = 0
    for config in comparison.configs:
        section = config_section(config)
        if left_out or len(section) > budget:
            left_out += 1
            continue
        body += section
        budget -= len(section)
    if left_out:
        body += f"_{left_out} more config(s) not shown here; the job summary lists them._\n\n"
    return body + "".join(tail)


def _cell(row: dict[str, Any], key: str, scale: float = 1.0) -> str:
    value = row["metrics"].get(key)
    return number(None if value is None else value * scale)


def summary(doc: dict[str, Any], limit: int = SUMMARY_LIMIT) -> str:
    """The run's results table as Markdown, one section per config."""
    rows = doc["rows"]
    lines = ["## Benchmark results\n\n"]
    run = doc.get("run") or {}
    if run.get("url"):
        lines.append(f"Run: {run['url']}\n\n")
    lines.append(f"{len(rows)} row(s).\n\n")
    groups: dict[str, list[dict[str, Any]]] = {}
    for row in rows:
        groups.setdefault(config_key(row["identity"]), []).append(row)
    text = "".join(lines)
    left_out = 0
    for members in _sorted_groups(groups.values()):
        section = _summary_section(members)
        if left_out or len(text) + len(section) > limit - 200:
            left_out += 1
            continue
        text += section
    if left_out:
        text += f"_{left_out} more config(s) not shown; see results.csv._\n"
    return text


def _sorted_groups(groups: Iterable[list[dict[str, Any]]]) -> list[list[dict[str, Any]]]:
    return sorted(groups, key=lambda rows: config_label(rows[0]["identity"]))


def _summary_section(rows: list[dict[str, Any]]) -> str:
    out = [f"### {config_label(rows[0]['identity'])}\n\n"]
    throughput = [r for r in rows if r["kind"] == "throughput"]
    if throughput:
        out.append(
            "| Conc | Throughput/GPU (tok/s) | Output/GPU (tok/s) | TTFT (ms) | TPOT (ms) "
            "| ITL (ms) | E2EL (s) | Interactivity (tok/s/user) |\n"
            "|---:|---:|---:|---:|---:|---:|---:|---:|\n"
        )
        for r in sorted(throughput, key=lambda r: r["identity"]["conc"]):
            cells = [
                str(r["identity"]["conc"]),
                _cell(r, "tput_per_gpu"),
                _cell(r, "output_tput_per_gpu"),
                _cell(r, "mean_ttft", 1000),
                _cell(r, "mean_tpot", 1000),
                _cell(r, "mean_itl", 1000),
                _cell(r, "mean_e2el"),
                _cell(r, "mean_intvty"),
            ]
            out.append("| " + " | ".join(cells) + " |\n")
    for r in (r for r in rows if r["kind"] == "accuracy"):
        out.append(f"\nAccuracy at conc {r['identity']['conc']}:\n\n")
        out.append("| Task | Metric | Score |\n|:--|:--|---:|\n")
        for s in r["accuracy"]:
            out.append(
                f"| {s['task']} | {s['metric']} ({s['filter']}) "
                f"| {_score(s['value'], s.get('stderr'))} |\n"
            )
    return "".join(out) + "\n"
