"""`infx reuse ...` and `infx stage-results`: the comment commands and the merge-time gate."""

from __future__ import annotations

import json
import os
from pathlib import Path

import click

from infx import git
from infx.cli.options import api_repo_option, workflow_option
from infx.context import repo_slug
from infx.errors import InfxError, UsageError
from infx.github.actions import CommentEvent, append_summary, comment_event, event, set_outputs
from infx.github.client import GitHub
from infx.reuse.ack import decide_ack
from infx.reuse.facts import Roles, ack_facts, gate_facts, pull_facts, stage_facts
from infx.reuse.gate import GateEvent, GateResult, Local, decide_gate
from infx.reuse.handoff import (
    Dispatch,
    StatusDecision,
    decision_outputs,
    parse_decision,
    parse_status,
)
from infx.reuse.measured import STATUS_CONTEXT, Merging, reuse_status, verdict
from infx.reuse.source import newest_request
from infx.reuse.stage import DISPATCH_EVENT, decide_stage
from infx.settings import Settings
from infx.settings import load as load_settings
from infx.sweep.labels import PRIMARY

repo_option = api_repo_option
decide_only_option = click.option(
    "--decide-only",
    is_flag=True,
    help="Read-only: write the decision as step outputs (reaction, dispatch, status) for "
    "`infx apply-decision` in a job that holds the write permission.",
)
remote_option = click.option(
    "--remote",
    default="origin",
    show_default=True,
    help="The remote whose main branch a PR merges into (a checkout with full history).",
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


def _client(repo: str | None) -> tuple[Path, Settings, GitHub, Roles]:
    """The checkout, its settings, the API client and the same client reading labels as
    roles (settings' [labels] renames)."""
    root = git.root()
    settings = load_settings(root)
    gh = GitHub(repo_slug(repo, root))
    return root, settings, gh, Roles(gh, settings.labels)


def _run_url(gh: GitHub) -> str | None:
    run_id = os.environ.get("GITHUB_RUN_ID")
    server = os.environ.get("GITHUB_SERVER_URL", "https://github.com").rstrip("/")
    return f"{server}/{gh.slug}/actions/runs/{run_id}" if run_id else None


def main_ref(root: Path, remote: str, branch: str) -> str:
    """Main as a checkout with full history knows it: the remote's branch, else the local."""
    for ref in (f"refs/remotes/{remote}/{branch}", f"refs/heads/{branch}"):
        if git.has_ref(ref, root):
            return ref
    raise UsageError(f"this checkout has neither {remote}/{branch} nor {branch}")


def _merging_of_pull(root: Path, settings: Settings, remote: str, head_sha: str) -> Merging:
    from infx.reuse.preview import merging_of_pull

    if not git.has_ref(f"{head_sha}^{{commit}}", root):
        return Merging(None, f"the PR head {head_sha[:12]} is not in this checkout")
    return merging_of_pull(root, main_ref(root, remote, settings.main_branch), head_sha, settings)


def _post_status(gh: GitHub, decided: StatusDecision) -> str:
    """Set the status unless the head already carries exactly it; say what happened."""
    current = next((s for s in gh.statuses(decided.sha) if s.context == STATUS_CONTEXT), None)
    if current == decided.status:
        return f"{STATUS_CONTEXT} on {decided.sha[:12]} already says: {decided.status.description}"
    gh.set_status(decided.sha, decided.status, _run_url(gh))
    return f"{STATUS_CONTEXT} on {decided.sha[:12]}: {decided.status.description}"


@click.group()
def reuse() -> None:
    """Reuse a PR's green sweep at merge (/reuse-sweep-run)."""


@reuse.command("ack")
@repo_option
@workflow_option
@remote_option
@decide_only_option
def ack_cmd(repo: str | None, workflow: str, remote: str, decide_only: bool) -> None:
    """React +1/-1 to a /reuse-sweep-run comment (issue_comment created/edited) and set the
    PR head's infx/reuse status; never comments. Runs in a checkout of main with full
    history, which holds the PR's branch."""
    received = _comment_event(("created", "edited"))
    if received is None:
        return
    root, settings, gh, reader = _client(repo)
    current, facts = gh.decide(lambda: ack_facts(reader, received, workflow))
    merging = Merging(None, "not needed")
    if facts is not None and facts.source is not None:
        merging = _merging_of_pull(root, settings, remote, facts.pull.head_sha)
    result = decide_ack(
        received,
        current,
        facts,
        merging,
        repo=gh.slug,
        workflow=workflow,
        main_branch=settings.main_branch,
    )
    status = None
    if result.verdict is not None and facts is not None:
        status = StatusDecision(facts.pull.head_sha, reuse_status(result.verdict))
    if decide_only:
        set_outputs(decision_outputs(result.reaction, [], status))
    else:
        _react(gh, received.comment_id, result.reaction)
        if status is not None:
            click.echo(_post_status(gh, status))
    verdict_word = {"+1": "accepted", "-1": "refused", None: "ignored"}[result.reaction]
    append_summary(f"### /reuse-sweep-run {verdict_word}\n\n{result.reason}\n")
    click.echo(f"{verdict_word}: {result.reason}")


def _local(root: Path, settings: Settings, asked: GateEvent) -> Local:
    """What the checkout says about the asking run: the pushed commit's first parent and
    what merges (the push itself, or the PR's merge commit GitHub checked out)."""
    from infx.reuse.preview import merging_between

    if asked.name == "push":
        parent = (
            git.rev_parse(f"{asked.commit_sha}^1", root)
            if git.has_ref(f"{asked.commit_sha}^1", root)
            else None
        )
        return Local(parent, merging_between(root, asked.before or "", asked.commit_sha, settings))
    if not git.has_ref("HEAD^2", root) or git.rev_parse("HEAD^2", root) != asked.commit_sha:
        merging = Merging(None, f"the checkout is not the merge commit of {asked.commit_sha[:12]}")
        return Local(None, merging)
    return Local(None, merging_between(root, "HEAD^1", "HEAD", settings))


@reuse.command("gate")
@repo_option
@click.option(
    "--commit-sha", required=True, help="The commit this run sweeps (PR head or pushed sha)."
)
@click.option("--event-name", required=True, help="github.event_name: push or pull_request.")
@click.option("--event-action", default=None, help="github.event.action (synchronize, ...).")
@click.option("--pr-number", type=int, default=None, help="The pull request's number (PR events).")
@click.option("--ref", required=True, help="github.ref; only the main branch reuses on push.")
@click.option("--before", default=None, help="github.event.before: the branch before a push.")
@click.option(
    "--status",
    "post_status",
    is_flag=True,
    help="On a PR event with a standing request, set the PR head's infx/reuse commit status.",
)
@workflow_option
def gate_cmd(
    repo: str | None,
    commit_sha: str,
    event_name: str,
    event_action: str | None,
    pr_number: int | None,
    ref: str,
    before: str | None,
    post_status: bool,
    workflow: str,
) -> None:
    """Decide whether this sweep run reuses a PR's run; outputs to GITHUB_OUTPUT and stdout.

    Runs in the run's checkout (a push: the pushed commit with its parent; a PR: GitHub's
    merge commit with its parents), where it plans what merges. Any failure (API error, an
    answer of the wrong shape, a cap reached) still writes the outputs, with reuse off and
    the reason, before exiting non-zero."""
    asked = GateEvent(event_name, commit_sha, ref, event_action, pr_number, before)
    try:
        root, settings, gh, reader = _client(repo)
        pulls = gh.decide(lambda: gate_facts(reader, asked, workflow, settings.main_branch))
        local = Local(None, Merging(None, "not needed"))
        if any(p.source is not None for p in pulls):
            local = _local(root, settings, asked)
        result = decide_gate(
            asked,
            pulls,
            local,
            repo=gh.slug,
            workflow=workflow,
            main_branch=settings.main_branch,
        )
    except InfxError as exc:
        set_outputs(GateResult(reason=f"no reuse: {exc}").outputs())
        raise
    outputs = result.outputs()
    set_outputs(outputs)
    append_summary(f"### Sweep reuse\n\n{result.reason}\n")
    click.echo(json.dumps(outputs, indent=2))
    if post_status and event_name == "pull_request" and result.verdict is not None:
        decided = StatusDecision(commit_sha, reuse_status(result.verdict))
        try:
            click.echo(_post_status(gh, decided), err=True)
        except InfxError as exc:
            click.echo(f"infx: warning: {STATUS_CONTEXT} not set: {exc}", err=True)


@reuse.command("status")
@repo_option
@workflow_option
@remote_option
@click.option(
    "--pr",
    "numbers",
    type=click.IntRange(min=1),
    multiple=True,
    help="A pull request to re-decide; repeat for several. Default: every open PR.",
)
@click.option(
    "--max-prs",
    type=click.IntRange(min=1),
    default=20,
    show_default=True,
    help="Re-decide at most this many open PRs asking for reuse (newest first).",
)
def status_cmd(
    repo: str | None, workflow: str, remote: str, numbers: tuple[int, ...], max_prs: int
) -> None:
    """Set the infx/reuse commit status of open PRs that ask for reuse, as merging them now
    would find it (after a push to main, whose changes may change the answer). Runs in a
    checkout of main with full history, which holds the PRs' branches."""
    root, settings, gh, reader = _client(repo)
    if numbers:
        pulls = [reader.pull(n) for n in numbers]
    else:
        # A PR with no primary sweep label never ran a sweep its labels asked for; a fork's
        # PR is never reused. Neither costs a request more.
        pulls = [
            p
            for p in reader.open_pulls(settings.main_branch)
            if p.head_repo == gh.slug and any(label in PRIMARY for label in p.labels)
        ]
    asked = 0
    for pull in pulls:
        if asked == max_prs:
            click.echo(f"stopped after {max_prs} PR(s) asking for reuse")
            break
        facts = gh.decide(lambda pull=pull: pull_facts(reader, pull, workflow))
        request = newest_request(facts.comments, facts.permissions)
        if request is None or facts.source is None:
            click.echo(f"PR #{pull.number}: no authorized /reuse-sweep-run")
            continue
        asked += 1
        merging = _merging_of_pull(root, settings, remote, pull.head_sha)
        found = verdict(
            pull,
            request,
            facts.source,
            merging,
            repo=gh.slug,
            workflow=workflow,
            main_branch=settings.main_branch,
            require_merged=False,
        )
        line = _post_status(gh, StatusDecision(pull.head_sha, reuse_status(found)))
        click.echo(f"PR #{pull.number}: {line}")
        append_summary(f"- PR #{pull.number}: {found.reason}\n")


@click.command("stage-results")
@repo_option
@workflow_option
@decide_only_option
def stage_results(repo: str | None, workflow: str, decide_only: bool) -> None:
    """Handle a /stage-results [<run_id>] comment: check, dispatch staging, react, summarize."""
    received = _comment_event(("created",))
    if received is None:
        return
    _, _, gh, reader = _client(repo)
    facts = gh.decide(lambda: stage_facts(reader, received, workflow))
    result = decide_stage(received, facts, workflow, gh.slug)
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
@click.option(
    "--status",
    envvar="STATUS",
    default="",
    help="The decided infx/reuse status as JSON {sha, state, description} (env STATUS).",
)
def apply_decision(repo: str | None, reaction: str, dispatch: str, status: str) -> None:
    """React, dispatch and set the status that a comment command decided read-only.

    The second job of the comment workflows: `infx reuse ack --decide-only` and `infx
    stage-results --decide-only` read the comment with a read-only token and hand their
    decision on as step outputs; this command, in the job holding the write permissions,
    checks that decision's shape, dispatches the staging event (for this event's PR only),
    reacts to this event's comment, and sets the PR head's infx/reuse status while that
    commit is still the head."""
    name, payload = event()
    if name != "issue_comment":
        raise UsageError("apply-decision runs on an issue_comment event")
    received = comment_event(payload)
    decided, to_dispatch = parse_decision(reaction, dispatch, received.issue_number)
    decided_status = parse_status(status)
    if decided is None and decided_status is None:
        click.echo("nothing to apply")
        return
    gh = GitHub(repo_slug(repo))
    if to_dispatch is not None:
        gh.dispatch(to_dispatch.event_type, to_dispatch.payload)
        click.echo(f"dispatched {to_dispatch.event_type} for PR #{received.issue_number}")
    _react(gh, received.comment_id, decided)
    if decided:
        click.echo(f"reacted {decided} to comment {received.comment_id}")
    if decided_status is not None:
        head = gh.pull(received.issue_number).head_sha
        if head != decided_status.sha:
            click.echo(f"PR #{received.issue_number}'s head moved to {head[:12]}; status left")
        else:
            click.echo(_post_status(gh, decided_status))
