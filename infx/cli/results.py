"""`infx results ...`: benchmark client output -> result rows -> run table -> comparison with main.

Imports of the results modules, PyGithub and matplotlib happen inside the commands, so
`infx --help` and the other commands do not pay for them.
"""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

import click

from infx.cli.options import api_repo_option
from infx.errors import UsageError


@click.group()
def results() -> None:
    """Turn benchmark output into numbers and compare them with main."""


@results.command()
@click.option(
    "--row",
    "row_json",
    default=None,
    help="The matrix row as JSON; default: the environment `infx sweep row-env` exported.",
)
@click.option(
    "--results-dir",
    envvar="RESULTS_DIR",
    default="results",
    show_default=True,
    type=click.Path(file_okay=False, path_type=Path),
    help="Where the recipe left the client output (RESULTS_DIR).",
)
@click.option(
    "--client-output",
    "outputs",
    multiple=True,
    type=click.Path(path_type=Path),
    help="Client output file(s) to read instead of the default place (one per concurrency).",
)
@click.option(
    "--out",
    type=click.Path(dir_okay=False, path_type=Path),
    default=None,
    help="Result file to write; default: RESULTS_DIR/infx-result.json.",
)
@click.option(
    "--runner-name", envvar="RUNNER_NAME", default="", help="The runner node (RUNNER_NAME)."
)
def process(
    row_json: str | None,
    results_dir: Path,
    outputs: tuple[Path, ...],
    out: Path | None,
    runner_name: str,
) -> None:
    """Read the client output of one benchmark job and write its normalized result rows."""
    from infx.results.files import process_job, write_json
    from infx.results.process import RESULT_FILE, check_row, row_from_env

    if row_json is not None:
        try:
            row = check_row(json.loads(row_json))
        except json.JSONDecodeError as exc:
            raise UsageError(f"--row is not JSON: {exc.msg}") from None
    else:
        row = row_from_env(os.environ)
    doc = process_job(row, results_dir, list(outputs) or None, runner_name)
    target = out or results_dir / RESULT_FILE
    write_json(target, doc)
    kinds = ", ".join(f"{r['kind']} conc {r['identity']['conc']}" for r in doc["rows"])
    click.echo(f"wrote {target}: {kinds} ({doc['rows'][0]['client']})")


def _run_metadata(run_id: str, sha: str, ref: str, attempt: str = "") -> dict[str, Any]:
    from infx.context import server_url

    run: dict[str, Any] = {}
    if run_id.isdigit() and int(run_id) > 0:
        run["id"] = int(run_id)
        if attempt.isdigit() and int(attempt) > 0:
            run["attempt"] = int(attempt)
        repo = os.environ.get("GITHUB_REPOSITORY")
        if repo:
            run["url"] = f"{server_url()}/{repo}/actions/runs/{run_id}"
    if sha:
        run["sha"] = sha
    if ref:
        run["ref"] = ref
    return run


@results.command()
@click.argument("roots", nargs=-1, required=True, type=click.Path(path_type=Path))
@click.option(
    "--out-dir",
    required=True,
    type=click.Path(file_okay=False, path_type=Path),
    help="Where to write results.json, results.csv and summary.md.",
)
@click.option(
    "--previous",
    multiple=True,
    type=click.Path(exists=True, path_type=Path),
    help="Results of earlier runs this run reruns part of (a results table or a folder of "
    "job files), oldest first: their points are kept unless this run measured them again.",
)
@click.option("--run-id", envvar="GITHUB_RUN_ID", default="", help="GITHUB_RUN_ID")
@click.option("--sha", envvar="GITHUB_SHA", default="", help="GITHUB_SHA")
@click.option("--ref", envvar="GITHUB_REF", default="", help="GITHUB_REF")
@click.option("--run-attempt", envvar="GITHUB_RUN_ATTEMPT", default="", help="GITHUB_RUN_ATTEMPT")
def collect(
    roots: tuple[Path, ...],
    out_dir: Path,
    previous: tuple[Path, ...],
    run_id: str,
    sha: str,
    ref: str,
    run_attempt: str,
) -> None:
    """Gather every job's infx-result.json below ROOTS into one results table, each point
    once."""
    from infx.github.actions import append_summary
    from infx.results.collect import csv_text, merge_runs
    from infx.results.files import TABLE_FILE, job_files, load_results, read_job_files, write_json
    from infx.results.render import summary
    from infx.yamlio import atomic_write

    earlier = [load_results(path) for path in previous]
    files = job_files(list(roots))
    if not files:
        click.echo(
            "infx: warning: no infx-result.json below " + " ".join(map(str, roots)), err=True
        )
    run = _run_metadata(run_id, sha, ref, run_attempt)
    merged = merge_runs(read_job_files(files), run, earlier)
    for point, names in merged.duplicates.items():
        click.echo(
            f"infx: warning: point {point} was measured by {len(names)} job files; "
            f"kept {names[-1]} (also: {', '.join(names[:-1])})",
            err=True,
        )
    table = merged.table
    csv_data = csv_text(table)
    markdown = summary(table)
    out_dir.mkdir(parents=True, exist_ok=True)
    write_json(out_dir / TABLE_FILE, table)
    atomic_write(out_dir / "results.csv", csv_data.encode())
    atomic_write(out_dir / "summary.md", markdown.encode())
    append_summary(markdown)
    click.echo(f"collected {len(table['rows'])} row(s) from {len(files)} file(s) into {out_dir}")
    if previous:
        click.echo(
            f"{len(table['rows'])} point(s): {merged.earlier} from earlier runs, "
            f"{merged.fresh} from this run ({merged.replaced} replacing earlier)"
        )


@results.command()
@click.argument("current", type=click.Path(exists=True, path_type=Path))
@click.option(
    "--baseline",
    type=click.Path(exists=True, path_type=Path),
    default=None,
    help="A results table or folder to compare with, instead of searching main's runs.",
)
@click.option("--baseline-run", type=int, default=None, help="Compare with this run's results_bmk.")
@api_repo_option
@click.option(
    "--workflow",
    default="run-sweep.yml",
    show_default=True,
    help="File name of the sweep workflow whose main runs are the baseline.",
)
@click.option(
    "--branch", default="main", show_default=True, help="The branch whose runs are the baseline."
)
@click.option(
    "--budget",
    type=click.IntRange(3, 50),
    default=6,
    show_default=True,
    help="Most GitHub API requests the baseline search may make.",
)
@click.option(
    "--threshold",
    type=click.FloatRange(0, 100),
    default=2.0,
    show_default=True,
    help="Percent change below which a metric is within noise.",
)
@click.option(
    "--pr",
    "pr_number",
    type=int,
    default=None,
    help="Post or update the sticky comment on this PR.",
)
@click.option(
    "--bot-login",
    default="github-actions[bot]",
    show_default=True,
    help="Author of the sticky comment (the token's user).",
)
@click.option(
    "--plots",
    type=click.Path(file_okay=False, path_type=Path),
    default=None,
    help="Write one Pareto plot (PNG) per config here (needs infx[plot]).",
)
@click.option(
    "--plots-artifact", default="results_compare", show_default=True, help="Named in the comment."
)
@click.option(
    "--out",
    type=click.Path(dir_okay=False, path_type=Path),
    default=None,
    help="Also write the Markdown here.",
)
def compare(
    current: Path,
    baseline: Path | None,
    baseline_run: int | None,
    repo: str | None,
    workflow: str,
    branch: str,
    budget: int,
    threshold: float,
    pr_number: int | None,
    bot_login: str,
    plots: Path | None,
    plots_artifact: str,
    out: Path | None,
) -> None:
    """Compare CURRENT (a results table or folder) with main and report per config and concurrency."""
    from infx.github.actions import append_summary
    from infx.results.compare import compare as compare_rows
    from infx.results.files import load_results
    from infx.results.render import SUMMARY_LIMIT, Context, comment
    from infx.yamlio import atomic_write

    if baseline is not None and baseline_run is not None:
        raise UsageError("--baseline and --baseline-run exclude each other")
    rows = load_results(current)["rows"]
    if not rows:
        click.echo(f"{current} holds no results: nothing to compare", err=True)
        return
    client = None
    searched = None
    if baseline is not None:
        bases = [(f"`{baseline}`", load_results(baseline)["rows"])]
    else:
        from infx.context import repo_slug
        from infx.github.client import GitHub
        from infx.results.baseline import find

        client = GitHub(repo_slug(repo))
        search = find(
            client, rows, workflow=workflow, branch=branch, budget=budget, run_id=baseline_run
        )
        bases = [(b.name, b.rows) for b in search.baselines]
        searched = search.describe()
        click.echo(f"baseline search: {searched}", err=True)
    comparison = compare_rows(rows, bases, threshold)
    plot_note = None
    if plots is not None:
        from infx.results.plot import draw

        written = draw(comparison, plots)
        plot_note = f"{len(written)} PNG(s) in the `{plots_artifact}` artifact"
    context = Context(
        baselines=tuple(
            name for name, _ in bases if any(c.baseline == name for c in comparison.configs)
        ),
        plots=plot_note,
        searched=searched,
    )
    body = comment(comparison, context)
    if out is not None:
        atomic_write(out, body.encode())
    append_summary(comment(comparison, context, SUMMARY_LIMIT) + "\n")
    click.echo(body)
    if pr_number is not None:
        if client is None:
            from infx.context import repo_slug
            from infx.github.client import GitHub

            client = GitHub(repo_slug(repo))
        action = upsert_comment(client, pr_number, body, bot_login)
        click.echo(f"{action} the results comment on #{pr_number}", err=True)


def upsert_comment(client: Any, number: int, body: str, bot_login: str) -> str:
    """Edit the sticky comment in place; create it only when the PR has none."""
    from infx.results.render import sticky

    found = sticky(client.comments(number), bot_login)
    if found is None:
        client.create_comment(number, body)
        return "created"
    if found.body == body:
        return "kept"
    client.edit_comment(found.id, body)
    return "updated"


_HISTORY_HELP = (
    "Where main's results history is: an SQLite path or sqlite:/// URL, or a postgresql:// "
    "URL. Default: INFX_HISTORY_URL, else `history` in infx.toml, else .infx/history.sqlite."
)


def _history_url(explicit: str | None) -> tuple[str, Any]:
    """The history's URL and the repository settings (read from the current folder)."""
    from infx import settings
    from infx.history.database import location

    root = Path.cwd()
    found = settings.load(root)
    return location(explicit, os.environ, found, root), found


@results.command()
@click.argument("table", type=click.Path(path_type=Path))
@click.option("--history", "history_url", default=None, metavar="URL", help=_HISTORY_HELP)
@click.option(
    "--run",
    "run_id",
    type=click.IntRange(min=1),
    default=None,
    help="Store the table as this workflow run, with the facts the GitHub API gives for it "
    "(commit, attempt, time); it must be a push to the main branch. The workflow passes its "
    "own run: a reused sweep's table names the pull request's run.",
)
@api_repo_option
def ingest(table: Path, history_url: str | None, run_id: int | None, repo: str | None) -> None:
    """Store a main run's results table (results_bmk/results.json) in the results history.

    Storing a run again changes nothing; a re-run attempt's values replace the points it
    measured again. Only the main branch's runs are accepted.
    """
    from infx.errors import ResultsError
    from infx.history import open_history
    from infx.history.database import shown
    from infx.history.rows import check
    from infx.results.files import load_results

    url, found = _history_url(history_url)
    branch = found.main_branch
    doc = load_results(table)
    if run_id is not None:
        from infx.context import repo_slug
        from infx.github.client import GitHub
        from infx.history.backfill import check_main_push, stamp

        run = GitHub(repo_slug(repo)).run(run_id)
        check_main_push(run, branch)
        try:
            doc = stamp(doc, run, branch)
        except ValueError as exc:
            raise ResultsError(str(exc)) from None
    checked = check(doc)
    if checked.run.ref != f"refs/heads/{branch}":
        raise ResultsError(
            f"run {checked.run.id} ran on {checked.run.ref or 'an unknown ref'}, not "
            f"refs/heads/{branch}: only main's runs go into the history"
        )
    if not checked.points:
        click.echo(f"{table} holds no results: nothing to store", err=True)
        return
    with open_history(url) as history:
        report = history.store(checked)
    click.echo(f"{report.describe()} -> {shown(url)}")


@results.command()
@click.option(
    "--runs",
    type=click.IntRange(1, 100),
    required=True,
    help="How many of main's newest successful push runs to read (one page of the API).",
)
@click.option("--history", "history_url", default=None, metavar="URL", help=_HISTORY_HELP)
@api_repo_option
@click.option(
    "--workflow",
    default="run-sweep.yml",
    show_default=True,
    help="File name of the sweep workflow whose main runs to read.",
)
@click.option("--branch", default=None, help="The main branch; default: settings, else main.")
@click.option(
    "--budget",
    type=click.IntRange(2, 1000),
    default=None,
    help="Most GitHub API requests to make; default 2 + 2 x RUNS (each run may need a lookup "
    "and a download).",
)
def backfill(
    runs: int,
    history_url: str | None,
    repo: str | None,
    workflow: str,
    branch: str | None,
    budget: int | None,
) -> None:
    """Fill the results history from main's recent runs' results_bmk artifacts.

    Runs already stored (at GitHub's newest attempt) are not downloaded again; expired,
    unreadable or contradictory tables are skipped and named.
    """
    from infx.context import repo_slug
    from infx.github.client import GitHub
    from infx.history import open_history
    from infx.history.backfill import backfill as fill
    from infx.history.database import shown

    url, found = _history_url(history_url)
    client = GitHub(repo_slug(repo))
    with open_history(url) as history:
        done = fill(
            client,
            history,
            runs=runs,
            workflow=workflow,
            branch=branch or found.main_branch,
            budget=budget or 2 + 2 * runs,
        )
    click.echo(f"{done.describe()} -> {shown(url)}")


@results.command()
@click.argument("result_file", required=False, type=click.Path(dir_okay=False, path_type=Path))
def floors(result_file: Path | None) -> None:
    """Check a job's eval scores against the accuracy floors in the settings.

    RESULT_FILE defaults to RESULTS_DIR/infx-result.json. Exit 1 when a score is below its
    floor (each named with the number and the floor); 0 when every score meets it or no
    floor applies."""
    from infx import git
    from infx.errors import ResultsError
    from infx.github.actions import append_summary
    from infx.results.files import load_results
    from infx.results.floors import checks, load_floors
    from infx.results.process import RESULT_FILE
    from infx.settings import load as load_settings

    root = git.root()
    target = result_file or Path(os.environ.get("RESULTS_DIR", "results")) / RESULT_FILE
    rules = load_floors(load_settings(root).accuracy_floors, root)
    doc = load_results(target)
    found = checks(doc, rules) if rules is not None else []
    for check in found:
        click.echo(check.text())
    failed = [c for c in found if not c.passed]
    if not found:
        click.echo("no accuracy floor applies to these results")
    if failed:
        append_summary(
            "### Accuracy below its floor\n\n" + "\n".join(f"- {c.text()}" for c in failed) + "\n"
        )
        raise ResultsError("; ".join(c.text() for c in failed))
