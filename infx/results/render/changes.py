"""Steps on main in words: the report `infx results changes` prints and writes to the job
summary, one section per suspect commit range, and the issue to open per range."""

from __future__ import annotations

from infx.markdown import Align, Md, code, link, table, text
from infx.results.render.cells import number, run_link, verdict_text
from infx.results.verdict.steps import ChangeIssue, Commits, Range, Step, marker
from infx.results.verdict.words import REGRESSED


def plan_issues(
    groups: dict[Range, list[Step]],
    commits: Commits,
    server: str,
    slug: str,
    branch: str,
) -> list[ChangeIssue]:
    """One issue per range: its report, and how many series regressed and improved."""

    out = []
    for key, found in groups.items():
        bad = found[0].bad
        body = marker(bad) + "\n" + changes_report({key: found}, commits, server, slug)
        worse = sum(s.verdict == REGRESSED for s in found)
        title = (
            f"Performance change on {branch} at run {bad.get('id')}: "
            f"{worse} series regressed, {len(found) - worse} improved"
        )
        out.append(ChangeIssue(bad.get("id"), marker(bad), title, body))
    return out


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
            f"### Between run {run_link(good)} (last good) and run {run_link(bad)} "
            f"(first changed)\n\n"
        )
        good_sha, bad_sha = good.get("sha"), bad.get("sha")
        if server and repo and isinstance(good_sha, str) and isinstance(bad_sha, str):
            url = f"{server}/{repo}/compare/{good_sha}...{bad_sha}"
            lines.append(f"Commits: {link(url, url)}\n\n")
        listed = commits.get(key)
        if listed:
            for sha, subject in listed[:50]:
                lines.append(f"- {code(sha[:7])} {text(subject)}\n")
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
                Md(f"{s.change_pct:+.1f}% {verdict_text(s.verdict)}"),
            ]
            for s in sorted(steps, key=lambda s: (s.verdict != "regressed", s.label, s.conc))
        ]
        headers = ["Config", "Conc", "Metric", "Before", "After", "Change"]
        align: list[Align] = ["left", "right", "left", "right", "right", "left"]
        lines.append(table(headers, rows, align) + "\n")
    return "".join(lines)
