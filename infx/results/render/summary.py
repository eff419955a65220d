"""The run summary `infx results collect` writes (summary.md and the job summary): the run's
table as Markdown, one section per config. Needs neither NumPy nor the noise model."""

from __future__ import annotations

from infx.markdown import Md, link, table, text
from infx.results.render.cells import SUMMARY_LIMIT, number, score_cell
from infx.results.table.keys import config_key, config_label
from infx.results.table.rows import Row, Table


def _summary_cell(row: Row, key: str, scale: float = 1.0) -> Md:
    value = row["metrics"].get(key)
    return Md(number(None if value is None else value * scale))


def summary(doc: Table, limit: int = SUMMARY_LIMIT) -> str:
    """The run's results table as Markdown, one section per config."""
    rows = doc["rows"]
    lines = ["## Benchmark results\n\n"]
    run = doc.get("run") or {}
    if isinstance(run.get("url"), str) and run["url"].startswith("https://"):
        lines.append(f"Run: {link(run['url'], run['url'])}\n\n")
    lines.append(f"{len(rows)} row(s).\n\n")
    groups: dict[str, list[Row]] = {}
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


def _summary_section(rows_of: list[Row]) -> str:
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
                score_cell(s["value"], s.get("stderr")),
            ]
            for s in r["accuracy"]
        ]
        out.append(table(["Task", "Metric", "Score"], scores, ["left", "left", "right"]))
    return "".join(out) + "\n"
