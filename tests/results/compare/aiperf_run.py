"""A sweep of this repository's agentic rows as aiperf measured it, turned into results the
way a sweep's jobs and its collect job do (`results process`, `results collect`), and
compared through the fake GitHub API (`results compare`): what tests/results/compare/
test_end_to_end.py runs live and test_recorded_run.py replays from a recorded run.
"""

from __future__ import annotations

import re
import zipfile
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from click.testing import CliRunner

from infx.cli import cli
from infx.matrix.rows import row_env
from tests.github.fake_api import State
from tests.results.formats import ROOT, agentic_rows

EXPORT = "aiperf/profile_export_aiperf.json"  # where the recipe leaves aiperf's export
RECORDED = (
    ROOT / "tests" / "results" / "compare" / "data" / "aiperf-run"
)  # main/ and pr/, job by job
DOCS = ROOT / "docs" / "results.md"  # the documentation page that shows the comment
START, END = "<!-- results-example:start -->", "<!-- results-example:end -->"
PLOT = ROOT / "docs/results-example.png"  # the plot of the same run, shown there
MAIN_DELAY, PR_DELAY = 0.020, 0.010  # seconds per token the server took
MAIN_RUN, PR_NUMBER, HEAD = 5150, 7, "e" * 40


def rows() -> list[dict[str, Any]]:
    """The rows both sweeps run: the agentic rows at concurrency 1 and 4."""
    found = [r for r in agentic_rows() if r["conc"] in (1, 4)]
    assert len(found) == 2
    return found


def job_folder(bmk: Path, index: int, row: dict[str, Any]) -> Path:
    """A job's results folder, named as the sweep workflow names it."""
    return bmk / f"bmk_agentic_{row['exp-name']}_{index}"


def job_env(row: dict[str, Any], folder: Path) -> dict[str, str]:
    """What the benchmark template exports for a job: the row, its folder and runner."""
    return {**row_env(row), "RESULTS_DIR": str(folder), "RUNNER_NAME": "mi355x-amds_03"}


def process(row: dict[str, Any], folder: Path) -> None:
    done = CliRunner().invoke(cli, ["results", "process"], env=job_env(row, folder))
    assert done.exit_code == 0, done.output


def collect(bmk: Path) -> Path:
    done = CliRunner().invoke(
        cli, ["results", "collect", str(bmk), "--out-dir", str(bmk)], env={"GITHUB_RUN_ID": ""}
    )
    assert done.exit_code == 0, done.output
    return bmk / "results.json"


def upload(state: State, table: Path, run_id: int = MAIN_RUN) -> None:
    """Publish a results table as a push-to-main sweep's results_bmk artifact."""
    state.add_run(
        run_id,
        head_sha="c0ffee" + "0" * 34,
        minute=100,
        branch="main",
        event="push",
        artifacts=["results_bmk"],
    )
    archive = table.parent / "results_bmk.zip"
    with zipfile.ZipFile(archive, "w") as zf:
        zf.write(table, "results.json")
    state.blobs[run_id * 100] = archive.read_bytes()


@dataclass(frozen=True)
class Compared:
    exit_code: int
    output: str
    body: str  # the sticky comment
    check: str  # the conclusion of the check run on the PR head
    plots: list[Path]


def compare(state: State, main: Path, pr: Path, folder: Path) -> Compared:
    """`results compare` of the PR's table against main's, published as main's newest run."""
    upload(state, main)
    state.add_pull(PR_NUMBER, head_sha=HEAD)  # the PR its acknowledgements are read from
    plots = folder / "plots"
    args = ["results", "compare", str(pr), "--pr", str(PR_NUMBER), "--plots", str(plots)]
    args += ["--check-sha", HEAD]
    done = CliRunner().invoke(cli, args, env={"GITHUB_STEP_SUMMARY": str(folder / "s.md")})
    (comment,) = [c for c in state.comments if c["user"]["login"] == "github-actions[bot]"]
    (check,) = [c["conclusion"] for c in state.check_runs[HEAD]]
    return Compared(done.exit_code, done.output, comment["body"], check, sorted(plots.glob("*")))


def cells(body: str, conc: int) -> list[str]:
    """The comment's table row for a concurrency, as its cells."""
    line = next(x for x in body.splitlines() if x.startswith(f"| {conc} |"))
    return [c.strip() for c in line.strip("|").split("|")]


CELL = re.compile(r"^([\d.,]+) → ([\d.,]+) \(([+-][\d.]+)%(?: ±[\d.]+)?\)(?: (\S+))?$")


def change(cell: str) -> tuple[float, float, float, str | None]:
    """A check's cell: main's level, the PR's value, the change in percent, its mark."""
    match = CELL.match(cell)
    assert match, cell
    before, after, pct, mark = match.groups()
    return float(before.replace(",", "")), float(after.replace(",", "")), float(pct), mark


def shape(text: str) -> list[str]:
    """A comment with its numbers and marks masked: what stays the same run to run."""
    text = re.sub(r"[+-]?[0-9][0-9.,]*", "N", text)  # a change near zero flips its sign
    text = re.sub(r" ?[🟢🔴⚪🟠🆕]", "", text)
    return [line for line in text.splitlines() if line.strip()]


def shown_example() -> str:
    """The comment body docs/results.md shows."""
    shown = DOCS.read_text().split(START, 1)[1].split(END, 1)[0]
    return shown.strip().removeprefix("````markdown").removesuffix("````")


def show_example(body: str, png: bytes) -> None:
    """Write the comment body and its plot into docs/results.md and beside it."""
    PLOT.write_bytes(png)
    head, rest = DOCS.read_text().split(START, 1)
    _, tail = rest.split(END, 1)
    DOCS.write_text(head + f"{START}\n````markdown\n{body.rstrip()}\n````\n{END}" + tail)
