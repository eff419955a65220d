"""What the results Markdown shares: numbers as shown, a verdict's mark and word, a run's link,
a score with its error, and GitHub's size limits. Data goes through `infx.markdown.text`."""

from __future__ import annotations

from infx.markdown import Md, code, link, text
from infx.results.table.rows import RunInfo
from infx.results.verdict.words import (
    COVERAGE_LOST,
    IMPROVED,
    MISSING,
    NEW,
    NOISE,
    REGRESSED,
    UNCONFIRMED,
)

# GitHub refuses step summaries over 1 MiB (comments: `comment.COMMENT_LIMIT`).
SUMMARY_LIMIT = 1_000_000
MARK = {
    IMPROVED: "🟢",
    REGRESSED: "🔴",
    NOISE: "⚪",
    COVERAGE_LOST: "🟠",
    NEW: "🆕",
    MISSING: "🟠",
    UNCONFIRMED: "🟡",
}
WORD = {
    IMPROVED: "improved",
    REGRESSED: "regressed",
    NOISE: "within noise",
    COVERAGE_LOST: "coverage lost",
    NEW: "new",
    MISSING: "missing",
    UNCONFIRMED: "unconfirmed",
}


def number(value: float | None) -> str:
    if value is None:
        return "–"
    if abs(value) >= 999.5:
        return f"{value:,.0f}"
    if value == 0:
        return "0"
    return f"{value:.4g}"


def run_link(run: RunInfo | None) -> Md:
    """A run as `[id](its page) (`sha`)`; the id alone where its URL is not an https one."""
    if not run:
        return Md("none")
    name = str(run.get("id", "?"))
    url = run.get("url")
    shown = link(name, url) if isinstance(url, str) and url.startswith("https://") else text(name)
    sha = run.get("sha")
    return Md(f"{shown} ({code(sha[:7])})") if isinstance(sha, str) and sha else shown


def verdict_text(verdict: str) -> Md:
    return Md(f"{MARK.get(verdict, '')} {WORD.get(verdict, verdict)}".strip())


def score_cell(value: float | None, stderr: float | None) -> Md:
    if value is None:
        return Md("–")
    return Md(f"{value:.4f} ± {stderr:.4f}" if stderr is not None else f"{value:.4f}")


def word_of(verdict: str) -> str:
    return WORD.get(verdict, verdict)
