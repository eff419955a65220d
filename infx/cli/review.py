"""`infx review signoff|pareto-coverage`, and the maintainer commands other groups carry:
`infx sweep priority|priority-labels|success-rate` and `infx results recover`. Each parses,
reads through its edge, asks its use case in `infx.review` and writes what that returns;
PyGithub, YAML and the database load only inside the command that needs them."""

from __future__ import annotations

from pathlib import Path

import click

from infx.cli.options import (
    EXISTING,
    EXISTING_FILE,
    FILE,
    PR_NUMBER,
    Stored,
    emit,
    history_option,
    runners_file,
    settings,
    shown,
    workflow_option,
)
from infx.cli.options import api_repo_option as repo_option
from infx.errors import ReviewError
from infx.review.priority import POLICY_FILE
from infx.sweep.outcome import Outcome, json_bytes

HELP = {
    "pr": "The pull request. Default: the one open PR into main whose head is --sha.",
    "sha": "The PR's head commit, when the event names no PR (a workflow_run of a review).",
    "status": "Set the commit status codeowner-signoff-verify on the head that was checked; then a missing sign-off exits 0 (the status says it).",
    "comment": "Post or update the advisory verdict as a sticky comment on the PR.",
    "bot-login": "Author of the sticky comment (the token's user).",
    "plan": "The sweep's plan (sweep.json): a curve it planned that measured nothing counts with 0 points.",
    "points": "Frontier points a curve needs. Default: pareto-points in infx.toml [review], else 5.",
    "json": "Also write the verdict as JSON here.",
    "check-sha": "Report the verdict as the check run infx/pareto-coverage on this commit (success or neutral: advisory).",
    "at": "The commit whose policy and runners.yaml count: the sweep's base (a PR may not raise its own jobs).",
    "policy": "The priority policy file (InferenceX's ci-priority.yaml format).",
    "run-id": "The workflow run (GITHUB_RUN_ID): each job's token is unique to it.",
    "event": "The event scored outside Actions (inside, GITHUB_EVENT_NAME and its payload's labels).",
    "runs": "How many of main's newest completed sweep runs to read.",
    "branch": "The main branch. Default: main-branch in infx.toml, else main.",
    "history-workflow": "File name of the sweep workflow whose run this is.",
}


@click.group()
def review() -> None:
    """Maintainer checks of a pull request: code-owner sign-off and Pareto coverage."""


@review.command()
@click.option("--pr", "number", type=PR_NUMBER, default=None, help=HELP["pr"])
@click.option("--sha", default=None, help=HELP["sha"])
@click.option("--status", "set_status", is_flag=True, help=HELP["status"])
@click.option("--comment", "post", is_flag=True, help=HELP["comment"])
@shown("--bot-login", default="github-actions[bot]", help=HELP["bot-login"])
@repo_option
@click.pass_context
def signoff(ctx: click.Context, number: int | None, sha: str | None, set_status: bool, post: bool, bot_login: str, repo: str | None) -> None:  # fmt: skip
    """Check that the code owners of every file a PR changes signed it off (CODEOWNERS at the
    PR's base; approvals of its current head). Prints the verdict; exits 1 when a sign-off
    is missing (0 with --status, which carries it)."""
    from infx.context import repo_slug
    from infx.github.client import GitHub
    from infx.github.values import Status
    from infx.review.facts import find_pull, signoff_facts, upsert_comment
    from infx.review.signoff import STATUS_CONTEXT, comment, decide

    found = settings(ctx)
    gh = GitHub(repo_slug(repo))
    verdict = decide(signoff_facts(gh, find_pull(gh, number, sha, found.main_branch), found))
    body = comment(verdict, found.review.escalate, found.review.pareto_points)
    if set_status:
        gh.set_status(verdict.head_sha, Status(STATUS_CONTEXT, verdict.state, verdict.description))
    if post:
        upsert_comment(gh, verdict.number, body, bot_login)
    missing = ReviewError(f"PR #{verdict.number}: {verdict.description}")
    error = None if verdict.passed or set_status else missing
    emit(Outcome(stdout=[body.rstrip()], summary=body.split("\n", 1)[1], error=error))


@review.command("pareto-coverage")
@click.argument("table", type=EXISTING)
@click.option("--plan", type=EXISTING_FILE, default=None, help=HELP["plan"])
@click.option("--points", type=click.IntRange(1, 100), default=None, help=HELP["points"])
@click.option("--json", "json_out", type=FILE, default=None, help=HELP["json"])
@click.option("--check-sha", default=None, help=HELP["check-sha"])
@repo_option
@click.pass_context
def pareto_coverage(ctx: click.Context, table: Path, plan: Path | None, points: int | None, json_out: Path | None, check_sha: str | None, repo: str | None) -> None:  # fmt: skip
    """Count the frontier points of each throughput-versus-latency curve in a sweep's
    results table (results.json, or a folder of job results). Advisory: exits 0 whatever
    it counts (1 when the table is not a results table)."""
    from infx.results.ingest.files import load_results
    from infx.review.facts import planned_curves
    from infx.review.pareto import as_json, coverage, headline, markdown

    planned = planned_curves(plan) if plan is not None else []
    found = coverage(
        load_results(table)["rows"], planned, points or settings(ctx).review.pareto_points
    )
    text = markdown(found)
    if check_sha is not None:
        from infx.context import repo_slug
        from infx.github.client import GitHub
        from infx.review.signoff import PARETO_CHECK

        conclusion = "success" if found.passed else "neutral"
        GitHub(repo_slug(repo)).create_check_run(
            PARETO_CHECK, check_sha, conclusion, headline(found)[:240], text
        )
    files = {json_out: json_bytes(as_json(found))} if json_out is not None else {}
    emit(Outcome(files, stdout=[text.rstrip()], summary=text, make_folders=True))


@click.command()
@click.argument("plan_file", type=EXISTING_FILE)
@click.option("--at", "ref", required=True, help=HELP["at"])
@shown("--policy", default=POLICY_FILE, help=HELP["policy"])
@runners_file
@click.option("--run-id", type=Stored(0), envvar="GITHUB_RUN_ID", default=0, help=HELP["run-id"])  # fmt: skip
@shown("--event", "event_name", default="push", help=HELP["event"])
def priority(plan_file: Path, ref: str, policy: str, runners_path: str, run_id: int, event_name: str) -> None:  # fmt: skip
    """Score every job of a plan by the priority policy committed at --at, into priority.json
    beside the plan (nothing without a policy). Runs in the sweep's setup job."""
    from infx import git
    from infx.review.schedule import priority_outcome, read_context, read_policy, read_sizes
    from infx.sweep.facts import read_plan_file

    root = git.root()
    found, sizes = read_policy(root, ref, policy), read_sizes(root, ref, runners_path)
    out, context = plan_file.parent / "priority.json", read_context(event_name)
    emit(priority_outcome(read_plan_file(plan_file), found, context, run_id, sizes, out))


@click.command("priority-labels")
@click.argument("plan_file", type=EXISTING_FILE)
@click.option("--bucket", required=True, help="The plan's job family (as `sweep chunk` takes it).")
@click.option("--index", type=int, required=True, help="Chunk number from `sweep outputs`.")
def priority_labels(plan_file: Path, bucket: str, index: int) -> None:
    """Write each row's runner labels for one chunk as the job output `labels` (a JSON array
    template per row, "" for a row that runs on its label alone), from the priority.json and
    runs-on.json beside the plan."""
    from infx.review.schedule import labels_outcome, read_priorities
    from infx.sweep.facts import read_pins, read_plan_file

    document = read_plan_file(plan_file)
    emit(labels_outcome(document, bucket, index, read_priorities(plan_file), read_pins(plan_file)))


@click.command("success-rate")
@shown("--runs", type=click.IntRange(1, 50), default=10, help=HELP["runs"])
@click.option("--branch", default=None, help=HELP["branch"])
@click.option("--json", "json_out", type=FILE, default=None, help=HELP["json"])
@workflow_option
@runners_file
@repo_option
@click.pass_context
def success_rate(ctx: click.Context, runs: int, branch: str | None, json_out: Path | None, workflow: str, runners_path: str, repo: str | None) -> None:  # fmt: skip
    """Success rate of benchmark jobs per hardware label (runner label) over main's newest
    sweep runs, every attempt counted; a Markdown table, and JSON with --json."""
    from infx import git
    from infx.context import repo_slug
    from infx.github.client import GitHub
    from infx.matrix.sources import load_runners
    from infx.review.success import as_json, markdown, sweep_runs, tally

    main = branch or settings(ctx).main_branch
    found = load_runners(git.root(), None, runners_path).runners
    pools = dict(found.labels) if found else {}
    gh = GitHub(repo_slug(repo))
    # Not one capped decision: a run of 500 jobs is five pages, and 50 runs are 250.
    chosen = sweep_runs(gh.branch_runs(workflow, main), workflow, main, gh.slug, runs)
    counts = tally({run.id: gh.jobs(run.id, every_attempt=True) for run in chosen}, pools)
    text = markdown(chosen, counts, main)
    files = {json_out: json_bytes(as_json(chosen, counts))} if json_out is not None else {}
    emit(Outcome(files, stdout=[text.rstrip()], summary=text, make_folders=True))


@click.command()
@click.argument("run")
@history_option
@workflow_option
@repo_option
def recover(run: str, history_url: str | None, workflow: str, repo: str | None) -> None:
    """Store a main sweep run's results and receipts in the history from its artifacts,
    when its ingest did not (no GPU job runs again). RUN is a run id or its URL. Exits 1
    when the run is not a finished push to main whose every benchmark job passed, or its
    artifacts do not vouch for the table."""
    from infx.context import repo_slug
    from infx.github.client import GitHub
    from infx.review.recover import recover as recover_run
    from infx.review.recover import run_number

    for line in recover_run(GitHub(repo_slug(repo)), run_number(run), history_url, workflow):
        click.echo(line)
