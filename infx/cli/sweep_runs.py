"""`infx sweep timings|triage|status|rerun|rerun-plan|dispatch-rerun` and `infx rerun-failed`:
what a sweep costs, why its jobs failed, and running again only what has no valid result.

Imports of PyGithub and the results modules happen inside the commands.
"""

from __future__ import annotations

import json
import os
import re
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

import click

from infx import git
from infx.cli.options import api_repo_option, workflow_option
from infx.errors import ConfigError, InfxError, UsageError
from infx.github.actions import append_summary, event, set_outputs

if TYPE_CHECKING:
    from infx.github.client import GitHub, Run
    from infx.rerun.facts import PlanFiles
    from infx.rerun.rules import RerunPlan
    from infx.sweep.record import RunRecord

STATUS_CONTEXT = "infx/gpu-budget"
ENVIRONMENT = "gpu-budget"
_BRANCH = re.compile(r"[A-Za-z0-9._/-]{1,200}")

repo_option = api_repo_option
scope_option = click.option(
    "--scope",
    type=click.Choice(["missing", "infra"]),
    default="missing",
    show_default=True,
    help="missing: every row without a valid result; infra: the rows whose job failed for an "
    "infra reason (and, when every failure was infra, the rows they kept from running).",
)


def _client(repo: str | None) -> GitHub:
    from infx.context import repo_slug
    from infx.github.client import GitHub

    return GitHub(repo_slug(repo))


def _run_id(value: str, what: str) -> int:
    if not re.fullmatch(r"[1-9][0-9]{0,19}", value or ""):
        raise UsageError(f"{what} must be a run id (digits), not {value!r}")
    return int(value)


# --- timings -------------------------------------------------------------------------------


@click.command("timings")
@click.option(
    "--out", required=True, type=click.Path(dir_okay=False, path_type=Path), help="File to write."
)
@click.option(
    "--runs",
    type=click.IntRange(1, 10),
    default=3,
    show_default=True,
    help="How many of the newest sweeps' timings to merge.",
)
@workflow_option
@repo_option
def timings(out: Path, runs: int, workflow: str, repo: str | None) -> None:
    """Fetch the job timings recorded by the newest sweeps (their sweep-jobs artifacts)."""
    from infx.matrix.timings import Timings, parse_timings
    from infx.rerun.facts import JOBS_ARTIFACT, TIMINGS_FILE, artifact_files, write_json

    gh = _client(repo)

    def fetch() -> tuple[Timings, list[int]]:
        merged, used, checked = Timings(), [], set()
        for artifact in gh.artifacts_named(JOBS_ARTIFACT, limit=30):
            if len(used) == runs or len(checked) == 2 * runs:
                break
            if artifact.expired or artifact.run_id is None or artifact.run_id in checked:
                continue
            checked.add(artifact.run_id)
            run = gh.run(artifact.run_id)
            # A fork's run executes the fork's workflow: its artifacts say what it likes.
            if not run.path.endswith(f".github/workflows/{workflow}") or run.head_repo != gh.slug:
                continue
            files = artifact_files(gh, artifact.run_id, JOBS_ARTIFACT) or {}
            if TIMINGS_FILE in files:
                name = f"run {artifact.run_id}'s {TIMINGS_FILE}"
                merged = merged.merge(parse_timings(files[TIMINGS_FILE], name))
                used.append(artifact.run_id)
        return merged, used

    merged, used = gh.decide(fetch)
    write_json(out, merged.as_json())
    shown = ", ".join(map(str, used)) or "none"
    click.echo(f"job timings of {len(merged.jobs)} identities from run(s) {shown} -> {out}")


# --- triage ----------------------------------------------------------------------------------


@click.command("triage")
@click.option(
    "--plan",
    "plan_dir",
    required=True,
    type=click.Path(file_okay=False, path_type=Path),
    help="This run's sweep-plan folder (sweep.json, rerun.json, timings.json).",
)
@click.option(
    "--previous",
    type=click.Path(file_okay=False, path_type=Path),
    help="The source run's sweep-jobs folder, for a rerun: its attempts count too.",
)
@click.option(
    "--results",
    "results_dirs",
    multiple=True,
    required=True,
    type=click.Path(file_okay=False, path_type=Path),
    help="This run's downloaded job results (bmk_*/eval_* folders; repeatable). Only a "
    "successful job that left a valid result there is a duration sample.",
)
@click.option(
    "--out-dir", required=True, type=click.Path(file_okay=False, path_type=Path), help="Output."
)
@click.option("--run-id", envvar="GITHUB_RUN_ID", required=True, help="GITHUB_RUN_ID")
@repo_option
def triage(
    plan_dir: Path,
    previous: Path | None,
    results_dirs: tuple[Path, ...],
    out_dir: Path,
    run_id: str,
    repo: str | None,
) -> None:
    """Classify this run's failed benchmark jobs, tabulate them per class and runner with the
    success rate per pool, and record the durations of its successful jobs that left a
    valid result (a job that passed without one measured nothing: its minutes would make
    the next estimate too low)."""
    from infx.matrix.timings import job_slot, row_at, samples_of
    from infx.rerun.facts import (
        TIMINGS_FILE,
        TRIAGE_FILE,
        folder_files,
        job_logs,
        plan_files,
        read_attempts,
        write_json,
    )
    from infx.rerun.rules import has_result, outcomes, valid_points
    from infx.rerun.triage import Attempt, summary

    this_run = _run_id(run_id, "--run-id")
    files = plan_files(folder_files(plan_dir), str(plan_dir))
    gh = _client(repo)

    def fetch() -> tuple[list, dict]:
        jobs = gh.jobs(this_run, every_attempt=True)
        return jobs, job_logs(gh, jobs)

    jobs, logs = gh.decide(fetch)
    attempts = [
        {
            "run": this_run,
            "attempt": outcome.attempt,
            "exp-name": outcome.row.get("exp-name"),
            "pool": str(outcome.row.get("runner")),
            "node": outcome.node,
            "conclusion": outcome.conclusion,
            "class": outcome.kind,
        }
        for outcome in outcomes(jobs, files.plan, logs)
    ]
    earlier: list[dict[str, Any]] = []
    if previous is not None and (previous / TRIAGE_FILE).is_file():
        earlier = read_attempts(previous / TRIAGE_FILE)
    every = [a for a in earlier if a.get("run") != this_run] + attempts
    write_json(out_dir / TRIAGE_FILE, {"format": "infx-sweep-triage/1", "attempts": every})
    recorded = files.timings
    if files.record is None or not files.record.agentx_fast:
        points = valid_points(_job_results(results_dirs), None)

        def measured(job: Any) -> bool:
            slot = job_slot(job.name)
            row = row_at(files.plan, slot) if slot else None
            return row is not None and has_result(row, slot.bucket.endswith("evals"), points)

        done = [job for job in jobs if job.conclusion == "success" and measured(job)]
        recorded = recorded.add(samples_of(done, files.plan, this_run))
    write_json(out_dir / TIMINGS_FILE, recorded.as_json())
    notes = {"Logs read": f"{len(logs)} (at most 30 per run)"} if logs else None
    markdown = summary(
        [Attempt(a["pool"], a["node"], a["conclusion"], a["class"]) for a in every], notes
    )
    append_summary(markdown)
    click.echo(markdown)


def _job_results(folders: tuple[Path, ...]) -> list[dict[str, Any]]:
    """The job result files below the folders (not tables: a rerun's table holds its
    source's points too); a file that is not one is skipped with a warning."""
    from infx.results.files import job_files, load_results

    docs = []
    for path in job_files(list(folders)):
        try:
            docs.append(load_results(path))
        except InfxError as exc:
            click.echo(f"infx: warning: not counted as a result: {exc}", err=True)
    return docs


# --- the budget status -------------------------------------------------------------------------


@click.command("status")
@click.option(
    "--estimate",
    "estimate_file",
    required=True,
    type=click.Path(exists=True, dir_okay=False, path_type=Path),
    help="The estimate.json `sweep plan --estimate` wrote.",
)
@click.option("--sha", required=True, help="The commit to set the status on (the PR head).")
@click.option("--approved", is_flag=True, help="The over-budget sweep was approved.")
@click.option("--target-url", default="", help="Link of the status (the run).")
@repo_option
def status(
    estimate_file: Path, sha: str, approved: bool, target_url: str, repo: str | None
) -> None:
    """Show the estimate against the budget on the commit (status `infx/gpu-budget`)."""
    if not re.fullmatch(r"[0-9a-f]{40}", sha):
        raise UsageError(f"--sha must be a full commit sha, not {sha!r}")
    try:
        doc = json.loads(estimate_file.read_text(encoding="utf-8"))
    except (json.JSONDecodeError, UnicodeDecodeError) as exc:
        raise UsageError(f"{estimate_file} is not an estimate: {exc}") from None
    if not isinstance(doc, dict) or doc.get("format") != "infx-sweep-estimate/1":
        raise UsageError(f"{estimate_file} is not an estimate written by `infx sweep plan`")
    verdict = str(doc.get("verdict", ""))
    if doc.get("over-budget") is True and not approved:
        state, text = "pending", f"{verdict}; waiting for approval in {ENVIRONMENT}"
    elif doc.get("over-budget") is True:
        state, text = "success", f"approved in {ENVIRONMENT}: {verdict}"
    else:
        state, text = "success", verdict
    from infx.github.client import Status

    # GitHub refuses a description over 140 characters.
    _client(repo).set_status(sha, Status(STATUS_CONTEXT, state, text[:140]), target_url or None)
    click.echo(f"{STATUS_CONTEXT}: {state}: {text}")


# --- deciding a rerun ------------------------------------------------------------------------------


@dataclass
class Decision:
    run: Run | None
    reason: str
    dispatch: dict[str, Any] | None = None
    preview: str = ""


def _preview(files: PlanFiles, todo: RerunPlan, whole_jobs: int, kinds: dict[str, str]) -> str:
    from infx.matrix.cost import estimate
    from infx.rerun.rules import jobs_of, row_id

    durations = files.timings.durations()
    agentx = bool(files.record and files.record.agentx_fast)
    costs = estimate(todo.jobs, durations, agentx)
    everything = estimate(jobs_of(files.whole), durations, agentx)
    part = sum(c.gpu_hours for c in costs)
    full = sum(c.gpu_hours for c in everything)
    lines = [
        f"Rerunning {len(todo.jobs)} of {whole_jobs} jobs: about {part:.1f} GPU-hours "
        f"(a full rerun: {full:.1f}).",
        "",
        "| job | conc | runner | why |",
        "| --- | --- | --- | --- |",
    ]
    for row, _ in todo.jobs[:40]:
        why = kinds.get(row_id(row), "no valid result")
        if todo.canary is not None and row_id(row) == row_id(todo.canary):
            why = "canary, first"
        lines.append(f"| {row.get('exp-name')} | {row.get('conc')} | {row.get('runner')} | {why} |")
    if len(todo.jobs) > 40:
        lines.append(f"| … {len(todo.jobs) - 40} more | | | |")
    return "\n".join(lines) + "\n"


def _floors_here() -> Any:
    """The accuracy floors of the checkout infx runs in (None outside one, or without)."""
    from infx.results.floors import load_floors
    from infx.settings import load as load_settings

    try:
        root = git.root()
        return load_floors(load_settings(root).accuracy_floors, root)
    except InfxError:
        return None


def _retry_refusal(pull: Any, category: str) -> str | None:
    """Why a PR's failed sweep is not retried automatically: closed, a draft again, or its
    sweep label taken off since (someone said to stop spending on it)."""
    if pull.state != "open":
        return f"PR #{pull.number} is {pull.state}; its sweep is not retried"
    if pull.draft:
        return f"PR #{pull.number} is a draft; its sweep is not retried"
    from infx.settings import load as load_settings

    try:
        name = load_settings(git.root()).label(category)
    except InfxError:
        name = category
    if name not in pull.labels:
        return f"PR #{pull.number} no longer carries its sweep label {name}; not retried"
    return None


def decide_rerun(
    gh: GitHub, run_id: int, workflow: str, scope: str, automatic: bool, pr: int | None = None
) -> Decision:
    """Whether and what to rerun of a run, read through the API (the rerun run itself
    decides again from the artifacts, with the recipe at its checkout)."""
    from infx.rerun.facts import job_logs, newer_sweeps, run_plan_files, run_results
    from infx.rerun.rules import (
        jobs_of,
        missing,
        outcomes,
        refusal,
        rerun_plan,
        row_id,
        select,
        valid_points,
    )

    def fetch() -> tuple[Any, ...]:
        run = gh.run(run_id)
        files = run_plan_files(gh, run_id)
        branch = gh.branch_runs(workflow, run.head_branch or "") if run.head_branch else []
        newer = newer_sweeps(gh, run)
        if files is None or files.record is None or run.status != "completed":
            return run, files, branch, newer, [], [], {}
        docs = run_results(gh, run_id)
        jobs = gh.jobs(run_id)
        return run, files, branch, newer, docs, jobs, job_logs(gh, jobs)

    run, files, branch, newer, docs, jobs, logs = gh.decide(fetch)
    record = files.record if files is not None else None
    why = refusal(
        run, workflow, record, branch, newer, scope=scope, automatic=automatic, repo=gh.slug
    )
    if why is None and pr is not None and record is not None and record.pr != pr:
        why = f"run {run.id} is not a sweep of PR #{pr}"
    if why is None and automatic and record is not None and record.pr is not None:
        pull = gh.decide(lambda: gh.pull(record.pr))
        why = _retry_refusal(pull, record.category)
    if why is not None or files is None or record is None:
        return Decision(run, why or "no plan")
    whole = files.whole
    plan_jobs = jobs_of(whole)
    seen = outcomes(jobs, files.plan, logs)
    # An eval that failed its floor check left a score in the table: no valid result (by
    # this checkout's floors, and by the job's own verdict when there are none here).
    missing_at = missing(plan_jobs, valid_points(docs, _floors_here()), seen)
    chosen = select(plan_jobs, missing_at, files.plan, seen, scope)
    if not chosen:
        return Decision(run, f"nothing to rerun: no {scope} row of run {run.id} lacks a result")
    todo = rerun_plan(whole, chosen, recipe_changed=False, source_canary=record.canary)
    kinds = {row_id(o.row): f"{o.kind} on {o.node or '?'}" for o in seen if o.kind}
    inputs = {"rerun-of": str(run.id), "scope": scope}
    if record.pr is not None:
        inputs["pr-number"] = str(record.pr)
    dispatch = {"workflow": workflow, "ref": run.head_branch or "", "inputs": inputs}
    preview = _preview(files, todo, len(plan_jobs), kinds)
    return Decision(run, f"rerun {len(todo.jobs)} job(s) of run {run.id}", dispatch, preview)


@click.command("rerun")
@click.argument("run_id")
@scope_option
@click.option(
    "--automatic",
    is_flag=True,
    help="The automatic retry after a failed sweep: only a failed run that is not itself a retry.",
)
@click.option("--dry-run", is_flag=True, help="Say what would run; dispatch nothing.")
@click.option(
    "--decide-only",
    is_flag=True,
    help="Read-only: write the dispatch as the step output `dispatch` for "
    "`infx sweep dispatch-rerun` in a job that may start workflows.",
)
@workflow_option
@repo_option
def rerun(
    run_id: str,
    scope: str,
    automatic: bool,
    dry_run: bool,
    decide_only: bool,
    workflow: str,
    repo: str | None,
) -> None:
    """Run again only the jobs of run RUN_ID that left no valid result.

    Dispatches the sweep workflow on the run's branch with `rerun-of`; that run carries
    the original plan, runs the canary first when the recipe changed since, and merges
    its results with the source run's."""
    source = _run_id(run_id, "RUN_ID")
    gh = _client(repo)
    # An infra-scope rerun is a retry: the rerun run checks it by the retry's rules.
    decision = decide_rerun(gh, source, workflow, scope, automatic or scope == "infra")
    _report(decision, "Rerun")
    if decide_only:
        set_outputs({"dispatch": json.dumps(decision.dispatch) if decision.dispatch else ""})
        return
    if decision.dispatch is None:
        if "nothing to rerun" not in decision.reason:
            raise ConfigError(decision.reason)
        return
    if dry_run:
        click.echo("dry run: nothing dispatched")
        return
    _dispatch(gh, decision.dispatch)


def _report(decision: Decision, title: str) -> None:
    text = f"### {title}\n\n{decision.reason}\n\n{decision.preview}"
    append_summary(text)
    click.echo(decision.reason)
    if decision.preview:
        click.echo(decision.preview.rstrip())


def _dispatch(gh: GitHub, dispatch: dict[str, Any]) -> None:
    gh.dispatch_workflow(dispatch["workflow"], dispatch["ref"], dispatch["inputs"])
    click.echo(f"dispatched {dispatch['workflow']} on {dispatch['ref']} with {dispatch['inputs']}")


# --- carrying a decision out ---------------------------------------------------------------------


def checked_dispatch(text: str, workflow: str) -> dict[str, Any]:
    """The dispatch a read-only job decided, refused unless it has exactly the shape a rerun
    dispatch has (a forged output cannot start another workflow or pass other inputs)."""
    try:
        data = json.loads(text)
    except json.JSONDecodeError:
        raise UsageError("the decided dispatch is not JSON") from None
    if not isinstance(data, dict) or set(data) != {"workflow", "ref", "inputs"}:
        raise UsageError("the decided dispatch must be {workflow, ref, inputs}")
    if data["workflow"] != workflow:
        raise UsageError(f"the decided dispatch starts {data['workflow']!r}, not {workflow}")
    ref = data["ref"]
    if not isinstance(ref, str) or not _BRANCH.fullmatch(ref) or ".." in ref:
        raise UsageError("the decided dispatch's ref is not a branch name")
    inputs = data["inputs"]
    if not isinstance(inputs, dict) or not {"rerun-of", "scope"} <= set(inputs) <= {
        "rerun-of",
        "scope",
        "pr-number",
    }:
        raise UsageError("the decided dispatch's inputs must be rerun-of, scope and pr-number")
    _run_id(inputs["rerun-of"], "rerun-of")
    if "pr-number" in inputs:
        _run_id(inputs["pr-number"], "pr-number")
    if inputs["scope"] not in ("missing", "infra"):
        raise UsageError("the decided dispatch's scope must be missing or infra")
    return data


@click.command("dispatch-rerun")
@click.option("--dispatch", envvar="DISPATCH", default="", help="The decided dispatch (env).")
@click.option("--reaction", envvar="REACTION", default="", help="+1, -1 or empty (env).")
@workflow_option
@repo_option
def dispatch_rerun(dispatch: str, reaction: str, workflow: str, repo: str | None) -> None:
    """Carry out the rerun that `infx sweep rerun --decide-only` or `infx rerun-failed
    --decide-only` decided: check its shape and that it reruns a run of this workflow on
    that run's own branch (for a comment, of the comment's own PR), then dispatch; react to
    the comment when the event is one."""
    from infx.github.actions import comment_event

    if reaction not in ("", "+1", "-1"):
        raise UsageError(f"reaction must be +1, -1 or empty, not {reaction!r}")
    name, payload = event()
    comment = comment_event(payload) if name == "issue_comment" else None
    gh = _client(repo)
    if dispatch:
        if comment is not None and reaction != "+1":
            raise UsageError("a dispatch comes only with an accepted (+1) command")
        data = checked_dispatch(dispatch, workflow)
        run = gh.decide(lambda: gh.run(int(data["inputs"]["rerun-of"])))
        if run.head_branch != data["ref"] or not run.path.endswith(f".github/workflows/{workflow}"):
            raise UsageError(f"run {run.id} is not a {workflow} run on {data['ref']}")
        if run.head_repo != gh.slug:
            raise UsageError(f"run {run.id} ran commits of {run.head_repo}, not {gh.slug}")
        if comment is not None and data["inputs"].get("pr-number") != str(comment.issue_number):
            raise UsageError(f"the dispatch is not for PR #{comment.issue_number}")
        _dispatch(gh, data)
    else:
        click.echo("nothing to dispatch")
    if comment is not None and reaction:
        bot = os.environ.get("INFX_BOT_LOGIN", "github-actions[bot]")
        gh.react(comment.comment_id, reaction, bot)
        click.echo(f"reacted {reaction} to comment {comment.comment_id}")


# --- the comment command --------------------------------------------------------------------------

_COMMAND = re.compile(r"/rerun-failed(?:[ \t]+([0-9]+))?")
USAGE = "usage: /rerun-failed [<run_id>] alone in the comment"


def _newest_sweep(gh: GitHub, pull: Any) -> int | None:
    """The newest run on the PR's head branch, of one of its commits, that planned a sweep."""
    from infx.sweep.record import PLAN_ARTIFACT

    commits = set(gh.pull_commits(pull.number))
    found = [
        a
        for a in gh.artifacts_since(PLAN_ARTIFACT, pull.created_at)
        if a.head_branch == pull.head_ref and a.head_sha in commits and a.run_id is not None
    ]
    return max(found, key=lambda a: (a.created_at, a.id)).run_id if found else None


@click.command("rerun-failed")
@click.option(
    "--decide-only",
    is_flag=True,
    help="Read-only: write the reaction and the dispatch as step outputs for "
    "`infx sweep dispatch-rerun` in a job that may write.",
)
@workflow_option
@repo_option
def rerun_failed(decide_only: bool, workflow: str, repo: str | None) -> None:
    """Handle a `/rerun-failed [<run_id>]` comment on a PR: a maintainer's request to run
    again the jobs of the PR's newest sweep (or the pinned run) that left no valid result."""
    from infx.github.actions import comment_event
    from infx.github.permissions import WRITE_PERMISSIONS

    name, payload = event()
    if name != "issue_comment" or payload.get("action") != "created":
        click.echo(f"ignored: {name} {payload.get('action', '')} is not a new comment")
        return
    received = comment_event(payload)
    body = received.body.strip()
    if not received.on_pull_request or not body.startswith("/rerun-failed"):
        click.echo("ignored: not a /rerun-failed comment on a pull request")
        return
    gh = _client(repo)
    reaction, decision = "-1", Decision(None, USAGE)
    match = _COMMAND.fullmatch(body)
    if match:
        decision = _comment_decision(gh, received, match.group(1), workflow, WRITE_PERMISSIONS)
        reaction = "+1" if decision.dispatch else "-1"
    _report(decision, f"/rerun-failed {'accepted' if reaction == '+1' else 'refused'}")
    dispatch = json.dumps(decision.dispatch) if decision.dispatch else ""
    if decide_only:
        set_outputs({"reaction": reaction, "dispatch": dispatch})
        return
    if decision.dispatch:
        _dispatch(gh, decision.dispatch)
    bot = os.environ.get("INFX_BOT_LOGIN", "github-actions[bot]")
    gh.react(received.comment_id, reaction, bot)


def _comment_decision(
    gh: GitHub, received: Any, pinned: str | None, workflow: str, allowed: Any
) -> Decision:
    comment = gh.decide(lambda: gh.comment(received.comment_id))
    permission = gh.decide(lambda: gh.permission(comment.author))
    if permission not in allowed:
        return Decision(None, f"{comment.author} lacks write, maintain or admin permission")
    pull = gh.decide(lambda: gh.pull(received.issue_number))
    if pull.state != "open":
        return Decision(None, f"PR #{pull.number} is {pull.state}")
    if pull.head_repo != gh.slug:
        return Decision(None, f"PR #{pull.number} comes from a fork; its sweeps never ran")
    run_id = int(pinned) if pinned else gh.decide(lambda: _newest_sweep(gh, pull))
    if run_id is None:
        return Decision(None, f"PR #{pull.number} has no sweep to rerun")
    try:
        return decide_rerun(gh, run_id, workflow, "missing", False, pr=pull.number)
    except InfxError as exc:
        return Decision(None, str(exc))


def register(group: click.Group) -> None:
    for command in (timings, triage, status, rerun, rerun_plan, dispatch_rerun):
        group.add_command(command)


# --- the rerun run's planning job -------------------------------------------------------------


@click.command("rerun-plan")
@click.option("--source-run", required=True, help="The run to rerun (input rerun-of).")
@click.option(
    "--source-dir",
    required=True,
    type=click.Path(file_okay=False, path_type=Path),
    help="Where the source run's artifacts were downloaded: sweep-plan/, sweep-jobs/, and its "
    "results (results_bmk/ and the per-job bmk_*/eval_* folders) below results/.",
)
@click.option(
    "--manifest",
    "manifest_file",
    required=True,
    type=click.Path(exists=True, dir_okay=False, path_type=Path),
    help="The source run's sweep-manifest.json: what it measured, which the rerun carries.",
)
@click.option(
    "--output-dir",
    required=True,
    type=click.Path(file_okay=False, path_type=Path),
    help="This run's sweep-plan folder to write.",
)
@scope_option
@click.option("--pr", "pr_text", default="", help="The PR the source run swept (input pr-number).")
@click.option("--run-id", envvar="GITHUB_RUN_ID", required=True, help="GITHUB_RUN_ID")
@click.option("--ref-name", envvar="GITHUB_REF_NAME", required=True, help="GITHUB_REF_NAME")
@workflow_option
@repo_option
def rerun_plan(
    source_run: str,
    source_dir: Path,
    manifest_file: Path,
    output_dir: Path,
    scope: str,
    pr_text: str,
    run_id: str,
    ref_name: str,
    workflow: str,
    repo: str | None,
) -> None:
    """Plan a rerun run: the source run's rows without a valid result (the canary first when
    a file its jobs read changed since), pinned to other nodes after infra failures; write
    this run's sweep.json, source-plan.json, rerun.json, runs-on.json and estimate.json, and
    the job outputs the workflow reads (run, fail-fast, agentx-fast, over-budget)."""
    from infx.matrix.cost import estimate, verdict, wall_minutes
    from infx.matrix.manifest import lineage
    from infx.matrix.sources import load_runners
    from infx.rerun.facts import (
        ESTIMATE_FILE,
        PLAN_FILE,
        TIMINGS_FILE,
        changed_files,
        folder_files,
        job_logs,
        newer_sweeps,
        plan_files,
        read_manifest,
        results_below,
        write_json,
    )
    from infx.rerun.rules import (
        PINS_FILE,
        RECORD_FILE,
        SOURCE_PLAN_FILE,
        jobs_of,
        missing,
        outcomes,
        pin_nodes,
        refusal,
        row_id,
        select,
        valid_points,
    )
    from infx.rerun.rules import rerun_plan as plan_rerun
    from infx.results.floors import load_floors
    from infx.settings import load as load_settings
    from infx.settings import load_at

    root = git.root()
    settings = load_settings(root)
    source_id = _run_id(source_run, "--source-run")
    this_run = _run_id(run_id, "--run-id")
    pr = _run_id(pr_text, "--pr") if pr_text else None
    files = plan_files(folder_files(source_dir / "sweep-plan"), f"run {source_id}'s sweep-plan")
    gh = _client(repo)

    def fetch() -> tuple[Any, ...]:
        run = gh.run(source_id)
        branch = gh.branch_runs(workflow, run.head_branch or "") if run.head_branch else []
        jobs = gh.jobs(source_id)
        return run, branch, newer_sweeps(gh, run), jobs, job_logs(gh, jobs)

    run, branch, newer, jobs, logs = gh.decide(fetch)
    others = [r for r in branch if r.id != this_run]
    why = refusal(
        run,
        workflow,
        files.record,
        others,
        newer,
        scope=scope,
        automatic=scope == "infra",
        repo=gh.slug,
    )
    record = files.record
    if why is None and record is not None and record.pr != pr:
        why = f"run {source_id} swept {_what(record.pr)}, not {_what(pr)}"
    if why is None and run.head_branch != ref_name:
        why = (
            f"run {source_id} ran on {run.head_branch}; dispatch its rerun there, not on {ref_name}"
        )
    if why is not None or record is None:
        raise ConfigError(f"no rerun: {why}")
    whole = files.whole
    manifest = read_manifest(manifest_file)
    if record.pr is not None:
        changed = _plan_changed(root, manifest, record, settings)
        if changed:
            raise ConfigError(f"no rerun: {changed}")
    recipe_changes = changed_files(root, manifest)
    floors = load_floors(settings.accuracy_floors, root)
    docs, skipped = results_below([source_dir / "results"])
    for text in skipped:
        click.echo(f"infx: warning: not counted as a result: {text}", err=True)
    plan_jobs = jobs_of(whole)
    seen = outcomes(jobs, files.plan, logs)
    missing_at = missing(plan_jobs, valid_points(docs, floors), seen)
    chosen = select(plan_jobs, missing_at, files.plan, seen, scope)
    todo = plan_rerun(
        whole, chosen, recipe_changed=bool(recipe_changes), source_canary=record.canary
    )
    if settings.rerun_other_node:
        runners = load_runners(root, None, settings.runners).runners
        pools = runners.labels if runners is not None else {}
        todo.pins, todo.notes = pin_nodes([r for r, _ in todo.jobs], seen, pools)
    mine = record.rerun(this_run, git.git(["rev-parse", "HEAD"], root).strip(), scope)
    costs = estimate(todo.jobs, files.timings.durations(), record.agentx_fast)
    budget_ref = "HEAD^1" if record.pr is not None else "HEAD"
    budget = verdict(costs, record.category, load_at(root, budget_ref).budget)
    labels = load_runners(root, None, settings.runners).runners
    wall = wall_minutes(costs, {k: len(v) for k, v in (labels.labels if labels else {}).items()})
    from infx.matrix.cost import estimate_document

    write_json(output_dir / PLAN_FILE, todo.plan)
    write_json(output_dir / SOURCE_PLAN_FILE, whole)
    write_json(output_dir / RECORD_FILE, mine.as_json())
    # The lineage's own record of what it measured: the source's, with the files this
    # checkout's jobs read; not reusable when a changed file's rows did not all run again.
    rerun_nodes = labels.labels if labels else {}
    record_files = git.read_many([("HEAD", n) for n in manifest["measured"]["files"]], root)
    measured = lineage(
        manifest,
        {name: data for (_, name), data in record_files.items()},
        [row for row, _ in plan_jobs],
        [row for row, _ in todo.jobs],
        rerun_nodes,
    )
    write_json(manifest_file, measured)
    if measured["sweep"]["reusable"] != manifest["sweep"]["reusable"]:
        click.echo(
            "infx: warning: files the jobs read changed since run "
            f"{source_id} and not every row reading them runs again: this lineage's results "
            "mix two versions and cannot be reused",
            err=True,
        )
    write_json(output_dir / PINS_FILE, todo.pins)
    write_json(output_dir / TIMINGS_FILE, files.timings.as_json())
    write_json(output_dir / ESTIMATE_FILE, estimate_document(costs, budget, wall))
    run_it = bool(todo.jobs)
    set_outputs(
        {
            "run": str(run_it).lower(),
            "fail-fast": str(record.fail_fast).lower(),
            "agentx-fast": str(record.agentx_fast).lower(),
            "trim-conc": str(record.options.trim_conc).lower(),
            "over-budget": str(budget.over).lower(),
            "gpu-hours": f"{budget.gpu_hours:.1f}",
            "budget-verdict": budget.text(),
        }
    )
    kinds = {row_id(o.row): f"{o.kind} on {o.node or '?'}" for o in seen if o.kind}
    lines = [f"### Rerun of run {source_id} ({scope})", ""]
    if not run_it:
        lines.append(f"Nothing to rerun: every {scope} row of run {source_id} has a valid result.")
    else:
        canary_note = ""
        if todo.canary is not None:
            reason = "it had failed"
            if recipe_changes:
                shown = ", ".join(recipe_changes[:3])
                more = f" and {len(recipe_changes) - 3} more" if len(recipe_changes) > 3 else ""
                reason = f"the recipe changed since: {shown}{more}"
            canary_note = f" The canary runs first ({reason})."
        lines.append(
            f"{len(todo.jobs)} of {len(plan_jobs)} planned jobs run again.{canary_note} "
            f"**Budget**: {budget.text()}."
        )
        lines += [
            "",
            "| job | conc | runner | pinned to | why |",
            "| --- | --- | --- | --- | --- |",
        ]
        for row, _ in todo.jobs:
            rid = row_id(row)
            why_row = (
                "canary"
                if todo.canary is not None and rid == row_id(todo.canary)
                else (kinds.get(rid, "no valid result"))
            )
            lines.append(
                f"| {row.get('exp-name')} | {row.get('conc')} | {row.get('runner')} "
                f"| {todo.pins.get(rid, '')} | {why_row} |"
            )
        lines += [f"- {note}" for note in todo.notes]
    text = "\n".join(lines) + "\n"
    append_summary(text)
    click.echo(text)


def _what(pr: int | None) -> str:
    return f"PR #{pr}" if pr is not None else "the main branch"


def _plan_changed(
    root: Path, manifest: dict[str, Any], record: RunRecord, settings: Any
) -> str | None:
    """Why the PR no longer plans the sweep its source run measured (None: it still does):
    the manifest of what the PR plans now, against the source's, files aside (a changed
    recipe is what a rerun after a fix is for; it runs the canary first)."""
    from infx.matrix.manifest import SweepOptions, differences, summarize
    from infx.matrix.sources import manifest_of, plan_change

    sweep, options = manifest["sweep"], manifest["measured"]["options"]
    sweep_options = SweepOptions(
        event=sweep["event"],
        label=sweep["label"],
        trim_conc=options["trim-conc"],
        all_evals=options["all-evals"],
        evals_only=options["evals-only"],
        agentx_fast=options["agentx-fast"],
        reusable=sweep["reusable"],
    )
    planned = plan_change(
        root, "HEAD^1", "HEAD", settings.changelog, settings.master_configs, settings.runners,
        record.options,
    )  # fmt: skip
    now = manifest_of(planned, sweep_options, settings.job_files)
    found = [d for d in differences(manifest, now) if not d.startswith("file ")]
    if not found:
        return None
    return (
        f"PR #{record.pr} now plans another sweep than run {record.run_id} measured "
        f"({summarize(found)}); run a new sweep instead"
    )
