"""`infx reuse ...` and `infx stage-results`: the comment commands and the merge-time gate."""

from __future__ import annotations

import json
import os

import click

from infx.context import repo_slug
from infx.errors import InfxError, UsageError
from infx.github.actions import append_summary, comment_event, event, set_outputs
from infx.github.client import GitHub
from infx.workflows.commands import CommentEvent
from infx.workflows.facts import ack_facts, gate_facts, stage_facts
from infx.workflows.handoff import Dispatch, decision_outputs, parse_decision
from infx.workflows.reuse import GateEvent, GateResult, decide_ack, decide_gate
from infx.workflows.stage import DISPATCH_EVENT, decide_stage

workflow_option = click.option(
    "--workflow-id",
    "workflow",
    default="run-sweep.yml",
    show_default=True,
    help="File name of the sweep workflow.",
)
repo_option = click.option("--repo", help="OWNER/NAME; default GITHUB_REPOSITORY.")
decide_only_option = click.option(
    "--decide-only",
    is_flag=True,
    help="Read-only: write the decision as step outputs (reaction, dispatch) for "
    "`infx apply-decision` in a job that holds the write permission.",
)


def _comment_event(actions: tuple[str, ...]) -> CommentEvent | None:
    """The issue_comment event if its action is one of `actions`, else None."""
    name, payload = event()
    if name != "issue_comment" or payload.get("action") not in actions:
        click.echo(
            f"ignored: {name} {payload.get('action', '')} is not a comment {' or '.join(actions)}"
        )
        return None
    return comment_event(payload)


def _react(gh: GitHub, comment_id: int, reaction: str | None) -> None:
    if reaction:
        bot = os.environ.get("INFX_BOT_LOGIN", "github-actions[bot]")
        gh.react(comment_id, reaction, bot)


@click.group()
def reuse() -> None:
    """Reuse a PR's green sweep at merge (/reuse-sweep-run)."""


@reuse.command("ack")
@repo_option
@workflow_option
@decide_only_option
def ack_cmd(repo: str | None, workflow: str, decide_only: bool) -> None:
    """React +1/-1 to a /reuse-sweep-run comment (issue_comment created/edited); never comments."""
    received = _comment_event(("created", "edited"))
    if received is None:
        return
    gh = GitHub(repo_slug(repo))
    current, facts = gh.decide(lambda: ack_facts(gh, received, workflow))
    result = decide_ack(received, current, facts, repo=gh.slug, workflow=workflow)
    if decide_only:
        set_outputs(decision_outputs(result.reaction, []))
    else:
        _react(gh, received.comment_id, result.reaction)
    verdict = {"+1": "accepted", "-1": "refused", None: "ignored"}[result.reaction]
    append_summary(f"### /reuse-sweep-run {verdict}\n\n{result.reason}\n")
    click.echo(f"{verdict}: {result.reason}")


@reuse.command("gate")
@repo_option
@click.option(
    "--commit-sha", required=True, help="The commit this run sweeps (PR head or pushed sha)."
)
@click.option("--event-name", required=True, help="github.event_name: push or pull_request.")
@click.option("--event-action", default=None, help="github.event.action (synchronize, ...).")
@click.option("--pr-number", type=int, default=None, help="The pull request's number (PR events).")
@click.option("--ref", required=True, help="github.ref; only refs/heads/main reuses on push.")
@workflow_option
def gate_cmd(
    repo: str | None,
    commit_sha: str,
    event_name: str,
    event_action: str | None,
    pr_number: int | None,
    ref: str,
    workflow: str,
) -> None:
    """Decide whether this sweep run reuses a PR's run; outputs to GITHUB_OUTPUT and stdout.

    Any failure (API error, an answer of the wrong shape, a cap reached) still writes the
    outputs, with reuse off and the reason, before exiting non-zero."""
    asked = GateEvent(event_name, commit_sha, ref, event_action, pr_number)
    try:
        gh = GitHub(repo_slug(repo))
        pulls = gh.decide(lambda: gate_facts(gh, asked, workflow))
        result = decide_gate(asked, pulls, repo=gh.slug, workflow=workflow)
    except InfxError as exc:
        set_outputs(GateResult(reason=f"no reuse: {exc}").outputs())
        raise
    outputs = result.outputs()
    set_outputs(outputs)
    append_summary(f"### Sweep reuse\n\n{result.reason}\n")
    click.echo(json.dumps(outputs, indent=2))


@click.command("stage-results")
@repo_option
@workflow_option
@decide_only_option
def stage_results(repo: str | None, workflow: str, decide_only: bool) -> None:
    """Handle a /stage-results [<run_id>] comment: check, dispatch staging, react, summarize."""
    received = _comment_event(("created",))
    if received is None:
        return
    gh = GitHub(repo_slug(repo))
    facts = gh.decide(lambda: stage_facts(gh, received, workflow))
    result = decide_stage(received, facts, workflow)
    dispatch = Dispatch(DISPATCH_EVENT, result.dispatch) if result.dispatch else None
    if decide_only:
        set_outputs(decision_outputs(result.reaction, [dispatch] if dispatch else []))
    else:
        if dispatch is not None:
            gh.dispatch(dispatch.event_type, dispatch.payload)
        _react(gh, received.comment_id, result.reaction)
    lines = [f"### /stage-results\n\n{result.reason}\n"]
    if result.staged:
        lines += ["| artifact | staged as |", "| --- | --- |"]
        lines += [f"| {name} | {staged} |" for name, staged in result.staged.items()]
        lines.append("")
    append_summary("\n".join(lines) + "\n")
    click.echo(result.reason)
    for artifact, staged in result.staged.items():
        click.echo(f"  {artifact} -> {staged}")


@click.command("apply-decision")
@repo_option
@click.option("--reaction", envvar="REACTION", default="", help="+1, -1 or empty (env REACTION).")
@click.option(
    "--dispatch", envvar="DISPATCH", default="", help="The decided dispatch as JSON (env DISPATCH)."
)
def apply_decision(repo: str | None, reaction: str, dispatch: str) -> None:
    """Carry out what `--decide-only` decided for this comment event: dispatch, then react."""
    name, payload = event()
    if name != "issue_comment":
        raise UsageError("apply-decision runs on an issue_comment event")
    received = comment_event(payload)
    decided, to_dispatch = parse_decision(reaction, dispatch, received.issue_number)
    if decided is None:
        click.echo("nothing to apply")
        return
    gh = GitHub(repo_slug(repo))
    if to_dispatch is not None:
        gh.dispatch(to_dispatch.event_type, to_dispatch.payload)
        click.echo(f"dispatched {to_dispatch.event_type} for PR #{received.issue_number}")
    _react(gh, received.comment_id, decided)
    click.echo(f"reacted {decided} to comment {received.comment_id}")
