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
    help="One results table or folder to compare with, instead of main's runs.",
)
@click.option("--baseline-run", type=int, default=None, help="Compare with this run's results_bmk.")
@click.option(
    "--history",
    "history_dir",
    default=None,
    metavar="DIR|URL",
    help="Main's history: a folder of results.json tables (with run metadata), or the "
    "results history database (an SQLite path, sqlite:/// or postgresql:// URL).",
)
@click.option(
    "--history-runs",
    type=click.IntRange(1, 50),
    default=None,
    help="Main runs read through the API as history. Default: history-runs in "
    "infx.toml [results], else 10.",
)
@api_repo_option
@click.option(
    "--workflow",
    default="run-sweep.yml",
    show_default=True,
    help="File name of the sweep workflow whose main runs are the history.",
)
@click.option(
    "--branch", default="main", show_default=True, help="The branch whose runs are the history."
)
@click.option(
    "--budget",
    type=click.IntRange(3, 200),
    default=None,
    help="Most GitHub API requests the history search may make. Default: history runs + 6.",
)
@click.option(
    "--threshold",
    type=click.FloatRange(0, 100),
    default=2.0,
    show_default=True,
    help="Percent change that is always within noise, whatever main's scatter.",
)
@click.option(
    "--format",
    "output_format",
    type=click.Choice(["text", "json"]),
    default="text",
    show_default=True,
    help="stdout: the Markdown comment, or the verdict as JSON (schemas/results-verdict).",
)
@click.option(
    "--pr",
    "pr_number",
    type=int,
    default=None,
    help="Post or update the sticky comment on this PR, and read its acknowledgements.",
)
@click.option(
    "--check-sha",
    default=None,
    help="Report the verdict as the check run `infx/results` on this commit (the PR head).",
)
@click.option(
    "--ack-label",
    default=None,
    help="PR label that acknowledges a regression. Default: acknowledge-label in infx.toml "
    "[results], else regression-acknowledged.",
)
@click.option(
    "--trimmed",
    is_flag=True,
    help="This run kept only each curve's lowest concurrency (label sweep-enabled): points "
    "it did not plan are shown as missing but are not coverage lost.",
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
    history_dir: str | None,
    history_runs: int | None,
    repo: str | None,
    workflow: str,
    branch: str,
    budget: int | None,
    threshold: float,
    output_format: str,
    pr_number: int | None,
    check_sha: str | None,
    ack_label: str | None,
    trimmed: bool,
    bot_login: str,
    plots: Path | None,
    plots_artifact: str,
    out: Path | None,
) -> None:
    """Judge CURRENT (a results table or folder) against main's history; exit 1 when
    something regressed or coverage was lost and nobody acknowledged it."""
    _needs_stats()
    from infx.github.actions import append_summary
    from infx.results.files import load_results
    from infx.results.render import SUMMARY_LIMIT, Context, check_output, comment
    from infx.results.verdict import compare as judge_rows
    from infx.results.verdict_json import to_json
    from infx.yamlio import atomic_write

    if sum(x is not None for x in (baseline, baseline_run, history_dir)) > 1:
        raise UsageError("--baseline, --baseline-run and --history exclude each other")
    config = _results_settings()
    ack_label = ack_label or config.acknowledge_label
    table = load_results(current)
    rows = table["rows"]
    own_id = (table.get("run") or {}).get("id")
    if not rows:
        click.echo(f"{current} holds no results: nothing to compare", err=True)
        return
    client = None
    if history_dir is not None:
        history, described = _read_history(history_dir, rows, history_runs or config.history_runs)
        own = [d for d in history if isinstance(own_id, int) and d["run"].get("id") == own_id]
        if own:  # this run's table inside the --history folder: never its own baseline
            history = [d for d in history if d["run"].get("id") != own_id]
            described += f"; this run's own table ({own_id}) left out"
    elif baseline is not None:
        history = [load_results(baseline)]
        described = f"one table, `{baseline.name}`"
    else:
        from infx.results.baseline import find

        client = _client(repo)
        runs = 1 if baseline_run is not None else history_runs or config.history_runs
        search = find(
            client,
            rows,
            workflow=workflow,
            branch=branch,
            budget=budget or runs + 6,
            run_id=baseline_run,
            runs=runs,
        )
        history = [b.document() for b in reversed(search.baselines)]
        described = f"{len(history)} successful {branch} run(s) read through the API"
        if not history:
            described = f"none found ({search.describe()})"
        click.echo(f"history search: {search.describe()}", err=True)
    report = judge_rows(rows, history, threshold, trimmed=trimmed)
    if report.failing and pr_number is not None:
        client = client or _client(repo)
        report = _acknowledge(client, report, pr_number, ack_label, bot_login)
    plot_note = None
    if plots is not None:
        from infx.results.plot import draw

        written = draw(report, plots)
        plot_note = f"{len(written)} PNG(s) in the `{plots_artifact}` artifact"
    context = Context(history=described, plots=plot_note, ack_label=ack_label, run_id=_this_run())
    body = comment(report, context)
    if out is not None:
        atomic_write(out, body.encode())
    append_summary(comment(report, context, SUMMARY_LIMIT) + "\n")
    if output_format == "json":
        click.echo(json.dumps(to_json(report), indent=2))
    else:
        click.echo(body)
    if pr_number is not None:
        client = client or _client(repo)
        action = upsert_comment(client, pr_number, body, bot_login)
        click.echo(f"{action} the results comment on #{pr_number}", err=True)
    if check_sha:
        client = client or _client(repo)
        conclusion, title, summary = check_output(report, context)
        client.create_check_run(CHECK_NAME, check_sha, conclusion, title, summary)
        click.echo(f"check run {CHECK_NAME} on {check_sha[:12]}: {conclusion}", err=True)
    if not report.passed:
        click.echo(f"infx: results gate fails: {report.verdict.replace('-', ' ')}", err=True)
        raise SystemExit(1)


CHECK_NAME = "infx/results"


def _read_history(
    where: str, rows: list[dict[str, Any]] | None, limit: int
) -> tuple[list[dict[str, Any]], str]:
    """Main's history from a folder of tables, else from the results history database
    (`infx results ingest` fills it): the newest `limit` runs holding `rows`' configs."""
    from infx.results.files import history_folder

    if Path(where).is_dir():
        docs = history_folder(Path(where))
        return docs, f"{len(docs)} run(s) from `{Path(where).name}`"
    from infx.history import open_history
    from infx.history.database import shown
    from infx.results.compare import family_key

    url, _ = _history_url(where)
    with open_history(url) as history:
        configs = None
        if rows is not None:
            # This run's configs and every config of their families, so that one main
            # measured and this run dropped shows as coverage lost.
            families = {family_key("", r["identity"]) for r in rows}
            configs = [r["identity"] for r in rows] + [
                c for c in history.config_identities() if family_key("", c) in families
            ]
        docs = history.main_runs(limit=limit, configs=configs)
    return docs, f"{len(docs)} main run(s) from the results history ({shown(url)})"


def _needs_stats() -> None:
    """The noise model needs NumPy (and, with a history, ruptures and SciPy)."""
    import importlib.util

    missing = [m for m in ("numpy", "scipy", "ruptures") if importlib.util.find_spec(m) is None]
    if missing:
        raise UsageError(
            f"comparing results needs {', '.join(missing)}: pip install 'infx[compare]'"
        )


def _client(repo: str | None) -> Any:
    from infx.context import repo_slug
    from infx.github.client import GitHub

    return GitHub(repo_slug(repo))


def _results_settings() -> Any:
    """infx.toml's [results] of the repository the command runs in (defaults outside one)."""
    from infx import git
    from infx.errors import GitError
    from infx.settings import load

    try:
        root = git.root()
    except GitError:
        root = Path.cwd()
    return load(root).results


def _this_run() -> int | None:
    import os

    run_id = os.environ.get("GITHUB_RUN_ID", "")
    return int(run_id) if run_id.isdigit() else None


def _acknowledge(client: Any, report: Any, number: int, label: str, bot_login: str) -> Any:
    """The PR's label or an authorized /ack-regression comment, if any, on the report. Inside
    Actions a comment counts only when posted after this run started and after the sticky
    comment began showing this run's verdict: it acknowledges the sweep a maintainer saw,
    not the next push's."""
    from infx.results.gate import acknowledgement, askers, shown
    from infx.results.render import sticky
    from infx.results.report import acknowledged

    pull = client.pull(number)
    run_id = _this_run()
    since = client.run(run_id).created_at if run_id is not None else None
    comments = client.comments(number)
    seen = shown(sticky(comments, bot_login), run_id) if run_id is not None else None
    permissions = {login: client.permission(login) for login in sorted(askers(comments, since))}
    found = acknowledgement(pull.labels, comments, permissions, label, since, seen)
    return acknowledged(report, found)


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


@results.command()
@click.option(
    "--history",
    "history_dir",
    default=None,
    metavar="DIR|URL",
    help="Main's history: a folder of results.json tables, or the results history database "
    "(an SQLite path, sqlite:/// or postgresql:// URL); default: main's runs through the API.",
)
@click.option(
    "--current",
    type=click.Path(exists=True, path_type=Path),
    default=None,
    help="This run's results table, the newest point (a run still going is not listed yet).",
)
@click.option(
    "--history-runs",
    type=click.IntRange(3, 50),
    default=20,
    show_default=True,
    help="Main runs read through the API.",
)
@api_repo_option
@click.option(
    "--workflow", default="run-sweep.yml", show_default=True, help="The sweep workflow's file."
)
@click.option("--branch", default="main", show_default=True, help="The branch to watch.")
@click.option(
    "--recent",
    type=click.IntRange(1, 20),
    default=3,
    show_default=True,
    help="Report steps whose first changed run is among this many newest runs.",
)
@click.option(
    "--threshold",
    type=click.FloatRange(0, 100),
    default=2.0,
    show_default=True,
    help="Smallest level change, in percent, worth reporting.",
)
@click.option(
    "--issue/--no-issue",
    default=None,
    help="Open an issue per new step range. Default: change-issues in infx.toml [results].",
)
@click.option(
    "--format",
    "output_format",
    type=click.Choice(["text", "json"]),
    default="text",
    show_default=True,
    help="stdout: Markdown or JSON.",
)
def changes(
    history_dir: str | None,
    current: Path | None,
    history_runs: int,
    repo: str | None,
    workflow: str,
    branch: str,
    recent: int,
    threshold: float,
    issue: bool | None,
    output_format: str,
) -> None:
    """After a main run: report series of main's history that stepped in the newest runs,
    with the commits between the last good and the first changed run."""
    _needs_stats()
    from infx.context import server_url
    from infx.errors import GitHubError
    from infx.github.actions import append_summary
    from infx.results.changes import detect, marker, ranges
    from infx.results.render import changes_report

    config = _results_settings()
    issue = config.change_issues if issue is None else issue
    client = None
    if history_dir is not None:
        history, _ = _read_history(history_dir, None, history_runs)
    else:
        client = _client(repo)
        history = _main_history(client, workflow, branch, history_runs)
    if current is not None:
        from infx.results.files import load_results

        newest = load_results(current)
        seen = (newest.get("run") or {}).get("id")
        history = [d for d in history if (d.get("run") or {}).get("id") != seen] + [newest]
    steps = detect(history, recent, threshold)
    groups = ranges(steps)
    commits: dict[Any, Any] = {}
    if groups and (client is not None or issue):
        client = client or _client(repo)
        for key, found in groups.items():
            good, bad = found[0].good.get("sha"), found[0].bad.get("sha")
            if isinstance(good, str) and isinstance(bad, str):
                try:
                    commits[key] = client.commits_between(good, bad)
                except GitHubError as exc:  # the report stands without the list
                    click.echo(f"infx: warning: commits not listed: {exc}", err=True)
    slug = client.slug if client is not None else ""
    markdown = changes_report(groups, commits, server_url() if slug else "", slug)
    append_summary(markdown)
    if output_format == "json":
        click.echo(json.dumps([_step_json(s) for s in steps], indent=2))
    else:
        click.echo(markdown)
    if issue and groups:
        label = config.change_issue_label
        existing = "\n".join(body for _, _, body in client.open_issues(label))
        for key, found in groups.items():
            bad = found[0].bad
            if marker(bad) in existing:
                click.echo(f"issue for run {bad.get('id')} already open", err=True)
                continue
            body = marker(bad) + "\n" + changes_report({key: found}, commits, server_url(), slug)
            worse = sum(s.verdict == "regressed" for s in found)
            title = (
                f"Performance change on {branch} at run {bad.get('id')}: "
                f"{worse} series regressed, {len(found) - worse} improved"
            )
            number = client.create_issue(title, body, [label])
            click.echo(f"opened issue #{number} for run {bad.get('id')}", err=True)


def _main_history(client: Any, workflow: str, branch: str, runs: int) -> list[dict[str, Any]]:
    """Main's newest `runs` successful sweep tables, oldest first, whatever configs they hold."""
    from infx.results.baseline import all_configs

    return all_configs(client, workflow=workflow, branch=branch, runs=runs)


def _step_json(step: Any) -> dict[str, Any]:
    return {
        "config": step.label,
        "key": step.key,
        "conc": step.conc,
        "metric": step.metric.key,
        "before": step.before,
        "after": step.after,
        "change_pct": step.change_pct,
        "verdict": step.verdict,
        "last_good": step.good,
        "first_changed": step.bad,
    }


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
