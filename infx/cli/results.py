"""`infx results ...`: benchmark client output -> result rows -> run table -> comparison with main.

Each command calls its use case in `infx.results` or `infx.history` and writes or prints
what that returns; they are imported inside the commands, so `infx --help` and the other
commands do not pay for PyGithub, NumPy or matplotlib.
"""

from __future__ import annotations

import os
from functools import partial
from pathlib import Path

import click

from infx.cli import LazyGroup
from infx.cli.options import (
    EXISTING,
    FILE,
    FOLDER,
    PATH,
    PR_NUMBER,
    FiniteRange,
    Stored,
    emit,
    env_option,
    history_option,
    request,
    shown,
    workflow_id,
)
from infx.cli.options import api_repo_option as repo_option
from infx.settings import SWEEP_WORKFLOW

_DB = "the results history database (an SQLite path, sqlite:/// or postgresql:// URL)"
_MAIN = "Default: main-branch in infx.toml, else main."
_READ = "File name of the sweep workflow whose main runs to read."
# The options' help, by flag (and by command where two commands say it differently).
HELP = {
    "row": "The matrix row: JSON text, or a file holding it; default: the environment `infx sweep row-env` exported.",
    "results-dir": "Where the recipe left the client output (RESULTS_DIR).",
    "client-output": "Client output file(s) to read instead of the default place (one per concurrency).",
    "process out": "Result file to write; default: RESULTS_DIR/infx-result.json.",
    "runner-name": "The runner node (RUNNER_NAME).",
    "config-key": "The master config the plan made this job from (INFX_CONFIG_KEY, which `infx sweep row-env` exports): written into each row's recipe, so two configs measuring the same identity stay two points.",
    "out-dir": "Where to write results.json, results.csv and summary.md.",
    "previous": "Results of earlier runs this run reruns part of (a results table or a folder of job files), oldest first: their points are kept unless this run measured them again.",
    "repeat": "Another run of the same head (a repeat or another attempt): its table is pooled with CURRENT's, point by point. Repeatable.",
    "baseline": "One results table or folder to compare with, instead of main's runs.",
    "baseline-run": "Compare with this run's results_bmk.",
    "history": f"Main's history: a folder of results.json tables (with run metadata), or {_DB}.",
    "history-runs": "Main runs that hold a config judged as its history (the API reads this many). Default: history-runs in infx.toml [results], else 20.",
    "workflow-id": "File name of the sweep workflow whose main runs are the history.",
    "branch": f"The branch whose runs are the history. {_MAIN}",
    "budget": "Most GitHub API requests the history search may make. Default: history runs + 6.",
    "threshold": "Percent change that is always within noise, whatever main's scatter.",
    "format": "stdout: the Markdown comment, or the verdict as JSON (schemas/results-verdict).",
    "pr": "Post or update the sticky comment on this PR, and read its acknowledgements.",
    "check-sha": "Report the verdict as the check run `infx/results` on this commit (the PR head).",
    "ack-label": "PR label that acknowledges a regression. Default: acknowledge-label in infx.toml [results], else regression-acknowledged.",
    "trimmed": "This run kept only each curve's lowest concurrency (label sweep-enabled): points it did not plan are shown as missing but are not coverage lost.",
    "bot-login": "Author of the sticky comment (the token's user).",
    "plots": "Write one Pareto plot (PNG) per config here (needs infx[plot]).",
    "plots-artifact": "Named in the comment.",
    "out": "Also write the Markdown here.",
    "verdict-out": "Also write the verdict as JSON here (schemas/results-verdict.schema.json): what `infx sweep repeat` decides from.",
    "main history": f"Main's history: a folder of results.json tables, or {_DB}; default: main's runs through the API.",
    "current": "This run's results table, the newest point (a run still going is not listed yet).",
    "api runs": "Main runs read through the API.",
    "changes branch": f"The branch to watch. {_MAIN}",
    "recent": "Report steps whose first changed run is among this many newest runs.",
    "changes threshold": "Smallest level change, in percent, worth reporting.",
    "issue": "Open an issue per new step range. Default: change-issues in infx.toml [results].",
    "changes format": "stdout: Markdown or JSON.",
    "run": "Store the table as this workflow run, with the facts the GitHub API gives for it (commit, attempt, time); it must be a push to the main branch. The workflow passes its own run: a reused sweep's table names the pull request's run.",
    "runs": "How many of main's newest successful push runs to read (one page of the API).",
    "backfill branch": f"The main branch. {_MAIN}",
    "backfill budget": "Most GitHub API requests to make; default 2 + 2 x RUNS (each run may need a lookup and a download).",
}
TEXT_OR_JSON = click.Choice(["text", "json"])
# --format of the commands that print text or JSON.
text_or_json = partial(shown, "--format", "output_format", type=TEXT_OR_JSON, default="text")


@click.group(
    cls=LazyGroup, lazy={"provenance": "provenance:provenance", "recover": "review:recover"}
)
def results() -> None:
    """Turn benchmark output into numbers and compare them with main."""


@results.command()
@click.option("--row", "row_json", default=None, help=HELP["row"])
@shown(
    "--results-dir", envvar="RESULTS_DIR", default="results", type=FOLDER, help=HELP["results-dir"]
)
@click.option("--client-output", "outputs", multiple=True, type=PATH, help=HELP["client-output"])
@click.option("--out", type=FILE, default=None, help=HELP["process out"])
@click.option("--runner-name", envvar="RUNNER_NAME", default="", help=HELP["runner-name"])
@click.option("--config-key", envvar="INFX_CONFIG_KEY", default="", help=HELP["config-key"])
def process(row_json: str | None, results_dir: Path, outputs: tuple[Path, ...], out: Path | None,
            runner_name: str, config_key: str) -> None:  # fmt: skip
    """Read the client output of one benchmark job and write its normalized result rows."""
    from infx.results.ingest.files import process_job, row_text, write_json
    from infx.results.ingest.process import RESULT_FILE, job_row, written

    row = job_row(row_text(row_json), os.environ)
    doc = process_job(row, results_dir, list(outputs) or None, runner_name, config_key)
    target = out or results_dir / RESULT_FILE
    write_json(target, doc)
    click.echo(written(target, doc))


@results.command()
@click.argument("roots", nargs=-1, required=True, type=PATH)
@click.option("--out-dir", required=True, type=FOLDER, help=HELP["out-dir"])
@click.option("--previous", multiple=True, type=EXISTING, help=HELP["previous"])
@env_option("--run-id", "GITHUB_RUN_ID", default="")
@env_option("--sha", "GITHUB_SHA", default="")
@env_option("--ref", "GITHUB_REF", default="")
@env_option("--run-attempt", "GITHUB_RUN_ATTEMPT", default="")
def collect(roots: tuple[Path, ...], out_dir: Path, previous: tuple[Path, ...], run_id: str, sha: str,
            ref: str, run_attempt: str) -> None:  # fmt: skip
    """Gather every job's infx-result.json below ROOTS into one results table, each point
    once."""
    from infx.context import server_url
    from infx.history.publish import collected
    from infx.results.ingest.collect import collect as gather
    from infx.results.ingest.collect import run_metadata
    from infx.results.ingest.files import collect_roots, job_files, load_results, read_job_files

    earlier = [load_results(path) for path in previous]
    jobs = read_job_files(job_files(collect_roots(list(roots))))
    repository = os.environ.get("GITHUB_REPOSITORY")
    run = run_metadata(run_id, sha, ref, run_attempt, repository, server_url())
    done = gather(jobs, earlier, run, roots=list(roots), out_dir=out_dir)
    for line, err in collected(out_dir, done):
        click.echo(line, err=err)


@results.command()
@click.argument("current", type=EXISTING)
@click.option("--repeat", "repeats", type=EXISTING, multiple=True, help=HELP["repeat"])
@click.option("--baseline", type=EXISTING, default=None, help=HELP["baseline"])
@click.option("--baseline-repeat", "baseline_repeats", type=EXISTING, multiple=True, help="A run of main's image measured in the same session as this PR's, on the same runner, interleaved: one per PR run (CURRENT, then each --repeat, in order), or fewer: then they pair with this PR's newest runs. The configs they measured are judged on the pairs' differences alone, main's history giving the scatter only; the others on all of this PR's runs against main's history. Repeatable.")  # fmt: skip
@click.option("--baseline-run", type=Stored(), default=None, help=HELP["baseline-run"])
@click.option("--history", "where", default=None, metavar="DIR|URL", help=HELP["history"])
@click.option("--history-runs", "runs", type=click.IntRange(1, 50), help=HELP["history-runs"])
@repo_option
@workflow_id(default=SWEEP_WORKFLOW, help=HELP["workflow-id"])
@click.option("--branch", default=None, help=HELP["branch"])
@click.option("--budget", type=click.IntRange(3, 200), default=None, help=HELP["budget"])
@shown("--threshold", type=FiniteRange(0, 100), default=2.0, help=HELP["threshold"])
@click.option("--false-fail", type=FiniteRange(0, 0.5, min_open=True), help="The share of unchanged sweeps the gate may fail (Benjamini-Hochberg across configs). Default: false-fail in infx.toml [results], else 0.05.")  # fmt: skip
@text_or_json(help=HELP["format"])
@click.option("--pr", type=PR_NUMBER, default=None, help=HELP["pr"])
@click.option("--check-sha", default=None, help=HELP["check-sha"])
@click.option("--ack-label", default=None, help=HELP["ack-label"])
@click.option("--trimmed", is_flag=True, help=HELP["trimmed"])
@shown("--bot-login", default="github-actions[bot]", help=HELP["bot-login"])
@click.option("--plots", type=FOLDER, default=None, help=HELP["plots"])
@shown("--plots-artifact", default="results_compare", help=HELP["plots-artifact"])
@click.option("--out", type=FILE, default=None, help=HELP["out"])
@click.option("--verdict-out", type=FILE, default=None, help=HELP["verdict-out"])
def compare(repo: str | None, **options: object) -> None:
    """Judge CURRENT against main's history; exit 1 on an unacknowledged regression or lost coverage."""
    from infx.results.compare.rules import CompareRequest, require_stats

    require_stats()
    from infx.history.compare import compare as judge
    from infx.history.publish import compared
    from infx.history.sources import repository_settings
    from infx.results.compare.client import client_of

    asked = CompareRequest.of(options)
    github = client_of(repo)
    done = judge(asked, repository_settings(), os.environ, github)
    for line, err in compared(github, asked.reporting, done):
        click.echo(line, err=err)
    if done.report is None or done.failure:
        raise SystemExit(done.exit_code)


@results.command()
@click.option("--history", "where", default=None, metavar="DIR|URL", help=HELP["main history"])
@click.option("--current", type=EXISTING, default=None, help=HELP["current"])
@shown("--history-runs", "runs", type=click.IntRange(3, 50), default=20, help=HELP["api runs"])
@repo_option
@workflow_id(default=SWEEP_WORKFLOW, help=_READ)
@click.option("--branch", default=None, help=HELP["changes branch"])
@shown("--recent", type=click.IntRange(1, 20), default=3, help=HELP["recent"])
@shown("--threshold", type=FiniteRange(0, 100), default=2.0, help=HELP["changes threshold"])
@click.option("--issue/--no-issue", default=None, help=HELP["issue"])
@text_or_json(help=HELP["changes format"])
def changes(repo: str | None, **options: object) -> None:
    """After a main run: report series of main's history that stepped in the newest runs,
    with the commits between the last good and the first changed run."""
    from infx.results.compare.rules import require_stats

    require_stats()
    from infx.context import server_url
    from infx.history.changes import ChangesRequest
    from infx.history.changes import changes as find
    from infx.history.publish import changed
    from infx.history.sources import repository_settings
    from infx.results.compare.client import client_of

    github = client_of(repo)
    done = find(request(ChangesRequest, options), repository_settings(), server_url(), github)
    for line, err in changed(github, done):
        click.echo(line, err=err)


@results.command()
@click.argument("table", type=PATH)
@history_option
@click.option("--run", "run_id", type=Stored(), default=None, help=HELP["run"])
@repo_option
def ingest(table: Path, history_url: str | None, run_id: int | None, repo: str | None) -> None:
    """Store a main run's results table (results_bmk/results.json) in the results history.

    Storing a run again changes nothing; a re-run attempt's values replace the points it
    measured again. Only the main branch's runs are accepted.
    """
    from infx.history.ingest import ingest as store
    from infx.results.compare.client import client_of

    said = store(table, history_url, run_id, client_of(repo))
    click.echo(said.line, err=said.err)


@results.command()
@click.option("--runs", type=click.IntRange(1, 100), required=True, help=HELP["runs"])
@history_option
@repo_option
@workflow_id(default=SWEEP_WORKFLOW, help=_READ)
@click.option("--branch", default=None, help=HELP["backfill branch"])
@click.option("--budget", type=click.IntRange(2, 1000), help=HELP["backfill budget"])
def backfill(runs: int, history_url: str | None, repo: str | None, workflow: str, branch: str | None,
             budget: int | None) -> None:  # fmt: skip
    """Fill the results history from main's recent runs' results_bmk artifacts.

    Runs already stored (at GitHub's newest attempt) are not downloaded again; expired,
    unreadable or contradictory tables are skipped and named.
    """
    from infx.history.ingest import fill
    from infx.results.compare.client import client_of
    from infx.reuse.issue_facts import vouched

    github = client_of(repo)
    said = fill(history_url, github, runs=runs, workflow=workflow, branch=branch, budget=budget, vouch=lambda run, data, main: vouched(github(), run, data, main))  # fmt: skip
    click.echo(said.line, err=said.err)


@results.command()
@click.argument("result_file", required=False, type=FILE)
def floors(result_file: Path | None) -> None:
    """Check a job's eval scores against the accuracy floors in the settings.

    RESULT_FILE defaults to RESULTS_DIR/infx-result.json. Exit 1 when a score is below its
    floor (each named with the number and the floor); 0 when every score meets it or no
    floor applies."""
    from infx.errors import ResultsError
    from infx.results.ingest.files import load_results, repository_floors
    from infx.results.ingest.process import result_file as default_file
    from infx.results.verdict.floors import verdict
    from infx.sweep.outcome import Outcome

    rules = repository_floors()
    done = verdict(load_results(result_file or default_file(os.environ)), rules)
    error = ResultsError(done.failure) if done.failure else None
    emit(Outcome(stdout=done.lines, summary=done.summary or "", error=error))
