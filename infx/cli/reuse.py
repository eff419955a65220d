"""`infx reuse ack|gate|status`, `infx stage-results` and `infx apply-decision`: each parses
its options, reads through `infx.reuse.edge`, asks a use case and carries out its answer."""

from __future__ import annotations

import json
from pathlib import Path
from typing import TypeAlias

import click

from infx.cli.options import FILE, PR_NUMBER, api_repo_option, request, shown, workflow_option
from infx.context import repo_slug
from infx.github.actions import append_summary, event, set_outputs
from infx.github.client import GitHub
from infx.reuse.edge import Checkout, answered, carry_out, gated, restatus, try_reuse_status
from infx.reuse.gate import GateEvent
from infx.reuse.handoff import Decision, handed_on

# The help of the options whose text runs long, by command and flag.
HELP = {
    "--decide-only": "Read-only: write the decision as step outputs (reaction, dispatch, status) for `infx apply-decision` in a job that holds the write permission.",
    "--remote": "The remote whose main branch a PR merges into (a checkout with full history).",
    "gate --commit-sha": "The commit this run sweeps (PR head or pushed sha).",
    "gate --event-name": "github.event_name: push or pull_request.",
    "gate --event-action": "github.event.action (synchronize, ...).",
    "gate --status": "On a PR event with a standing request, set the PR head's infx/reuse commit status.",
    "gate --receipt": "On a push that reuses a PR's run, write its merge receipt here (schemas/receipt.schema.json): the run, who asked, the verdict, the approvals.",
    "status --pr": "A pull request to re-decide; repeat for several. Default: every open PR.",
    "status --max-prs": "Re-decide at most this many open PRs asking for reuse (newest first).",
    "apply-decision --dispatch": "The decided dispatch as JSON (env DISPATCH).",
    "apply-decision --status": "The decided infx/reuse status as JSON {sha, state, description} (env STATUS).",
}
decide_only_option = click.option("--decide-only", is_flag=True, help=HELP["--decide-only"])
remote_option = click.option("--remote", default="origin", show_default=True, help=HELP["--remote"])
Given: TypeAlias = str | None


@click.group()
def reuse() -> None:
    """Reuse a PR's green sweep at merge (/reuse-sweep-run)."""


@reuse.command("ack")
@api_repo_option
@workflow_option
@remote_option
@decide_only_option
def ack_cmd(repo: str | None, workflow: str, remote: str, decide_only: bool) -> None:
    """React +1/-1 to a /reuse-sweep-run comment (issue_comment created/edited) and set the
    PR head's infx/reuse status; never comments. Runs in a checkout of main with full
    history, which holds the PR's branch."""
    for line in answered(repo, decide_only, ("created", "edited"), lambda c, r: c.ack(r, workflow, remote)):  # fmt: skip
        click.echo(line)


@reuse.command("gate")
@api_repo_option
@click.option("--commit-sha", required=True, help=HELP["gate --commit-sha"])
@click.option("--event-name", "name", required=True, help=HELP["gate --event-name"])
@click.option("--event-action", "action", default=None, help=HELP["gate --event-action"])
@click.option("--pr-number", type=PR_NUMBER, help="The pull request's number (PR events).")
@click.option("--ref", required=True, help="github.ref; only the main branch reuses on push.")
@click.option("--before", default=None, help="github.event.before: the branch before a push.")
@click.option("--status", "post_status", is_flag=True, help=HELP["gate --status"])
@click.option("--receipt", "receipt_file", type=FILE, default=None, help=HELP["gate --receipt"])
@workflow_option
def gate_cmd(repo: str | None, post_status: bool, receipt_file: Path | None, workflow: str,
             **asking: object) -> None:  # fmt: skip
    """Decide whether this sweep run reuses a PR's run; outputs to GITHUB_OUTPUT and stdout.

    Runs in the run's checkout (a push: the pushed commit with its parent; a PR: GitHub's
    merge commit with its parents), where it plans what merges. Any failure (API error, an
    answer of the wrong shape, a cap reached) still writes the outputs, with reuse off and
    the reason, before exiting non-zero."""
    checkout, found, sealed = gated(repo, request(GateEvent, asking), workflow, receipt_file)
    if sealed is not None:
        click.echo(sealed, err=True)
    set_outputs(found.outputs)
    append_summary(found.summary)
    click.echo(json.dumps(found.outputs, indent=2))
    if post_status and found.status is not None:
        click.echo(try_reuse_status(checkout.gh, found.status), err=True)


@reuse.command("status")
@api_repo_option
@workflow_option
@remote_option
@click.option("--pr", "numbers", type=PR_NUMBER, multiple=True, help=HELP["status --pr"])
@shown("--max-prs", type=click.IntRange(min=1), default=20, help=HELP["status --max-prs"])
def status_cmd(repo: str | None, workflow: str, remote: str, numbers: tuple[int, ...], max_prs: int) -> None:  # fmt: skip
    """Set the infx/reuse commit status of open PRs that ask for reuse, as merging them now
    would find it (after a push to main, whose changes may change the answer). Runs in a
    checkout of main with full history, which holds the PRs' branches."""
    checkout = Checkout.open(repo)
    for line, found in restatus(checkout, numbers, checkout.scope(workflow), remote, max_prs):
        click.echo(line)
        if found is not None:
            append_summary(found.summary)


@click.command("stage-results")
@api_repo_option
@workflow_option
@decide_only_option
def stage_results(repo: str | None, workflow: str, decide_only: bool) -> None:
    """Handle a /stage-results [<run_id>] comment: check, dispatch staging, react, summarize."""
    for line in answered(repo, decide_only, ("created",), lambda c, r: c.stage(r, workflow)):
        click.echo(line)


@click.command("apply-decision")
@api_repo_option
@click.option("--reaction", envvar="REACTION", default="", help="+1, -1 or empty (env REACTION).")
@click.option("--dispatch", envvar="DISPATCH", default="", help=HELP["apply-decision --dispatch"])
@click.option("--status", envvar="STATUS", default="", help=HELP["apply-decision --status"])
def apply_decision(repo: str | None, reaction: str, dispatch: str, status: str) -> None:
    """React, dispatch and set the status that a comment command decided read-only.

    The second job of the comment workflows: `infx reuse ack --decide-only` and `infx
    stage-results --decide-only` read the comment with a read-only token and hand their
    decision on as step outputs; this command, in the job holding the write permissions,
    checks that decision's shape, dispatches the staging event (for this event's PR only),
    reacts to this event's comment, and sets the PR head's infx/reuse status while that
    commit is still the head."""
    received, decided = handed_on(*event(), reaction, dispatch, status)
    if decided == Decision():
        click.echo("nothing to apply")
        return
    for line in carry_out(GitHub(repo_slug(repo)), received, decided, handed_on=True):
        click.echo(line)
