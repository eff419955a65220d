"""A Markdown table of what a plan will run, for humans and GITHUB_STEP_SUMMARY."""

from __future__ import annotations

from infx.matrix.plan import Plan


def _concs(values: list[int], limit: int = 12) -> str:
    shown = ", ".join(map(str, values[:limit]))
    return shown + (f", … ({len(values)} in all)" if len(values) > limit else "")


def summary_table(plan: Plan) -> str:
    if not plan.summary:
        return "Nothing to run: no appended changelog entry selects a benchmark point."
    lines = [
        "| config | runner | scenario | rows | concurrencies |",
        "| --- | --- | --- | ---: | --- |",
    ]
    for item in plan.summary:
        lines.append(
            f"| {item.config} | {item.runner} | {item.scenario} | {item.rows} | {_concs(item.concurrencies)} |"
        )
    total = sum(item.rows for item in plan.summary)
    lines.append(f"\n{total} job(s) across {len({i.config for i in plan.summary})} config(s).")
    return "\n".join(lines)
