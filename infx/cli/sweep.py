"""`infx sweep ...`: plan the benchmark matrix of a changelog diff, pick a canary, validate configs."""

from __future__ import annotations

import json
import sys
from collections.abc import Mapping
from pathlib import Path
from typing import TYPE_CHECKING

import click

from infx import git
from infx.cli.options import (
    base_option,
    branch_base,
    changelog_file,
    master_configs,
    runners_file,
    settings,
)
from infx.errors import ConfigError, InfxError, UsageError
from infx.github.actions import append_summary, event, set_outputs
from infx.matrix.cost import PUSH
from infx.matrix.options import PlanOptions
from infx.matrix.plan import canary
from infx.matrix.rows import BUCKETS, bucket_outputs, chunk_rows, recipe_path, row_env
from infx.matrix.sources import load_masters, load_runners, manifest_of, plan_change
from infx.matrix.summary import summary_table
from infx.matrix.validate import runner_label_problems, validate_configs
from infx.schemas import errors as schema_errors
from infx.settings import load as load_settings
from infx.settings import load_at as load_settings_at
from infx.sweep.labels import Decision, decide_event
from infx.yamlio import atomic_write

if TYPE_CHECKING:
    from infx.matrix.cost import BudgetVerdict, JobCost
    from infx.matrix.plan import Plan
    from infx.matrix.sources import RunnerInfo


@click.group()
def sweep() -> None:
    """Plan and check benchmark sweeps."""


strict_option = click.option(
    "--strict", is_flag=True, help="Treat warnings (unknown runner labels) as errors."
)


def _event_decision(root: Path) -> tuple[Decision, str, dict]:
    """The label decision for this Actions event, with the event's name and payload."""
    name, payload = event()
    head_sha = ((payload.get("pull_request") or {}).get("head") or {}).get("sha")
    decision = decide_event(name, payload, _head_message(head_sha), load_settings(root).labels)
    return decision, name, payload


def _event_refs(name: str, payload: dict) -> tuple[str, str]:
    """What a run plans between: a push from `before` to `after`, a pull request's merge
    commit from its first parent (the base branch tip)."""
    if name == "push":
        before, after = str(payload.get("before", "")), str(payload.get("after", ""))
        if not before.strip("0") or not after:
            raise UsageError("the push event names no `before` commit to plan from")
        return before, after
    return "HEAD^1", "HEAD"


def _head_message(sha: str | None) -> str:
    if not sha:
        return ""
    try:
        return git.git(["log", "-1", "--format=%B", sha])
    except InfxError:
        return ""


@sweep.command()
@base_option
@click.option("--head", default=None, help="Ref with the change; default: the working tree.")
@click.option("--trim-conc", is_flag=True, help="Keep only the lowest concurrency of each curve.")
@click.option("--all-evals", is_flag=True, help="Run an eval at every eligible planned point.")
@click.option("--evals-only", is_flag=True, help="Plan evals only, no throughput rows.")
@click.option(
    "--from-event",
    is_flag=True,
    help="Inside Actions: take the refs and the label decision (trim, evals, canary) from "
    "the event (GITHUB_EVENT_PATH), as `sweep mode` decides; with a canary, --output "
    "holds the canary split.",
)
@click.option(
    "--format",
    "fmt",
    type=click.Choice(["json", "summary"]),
    default="json",
    show_default=True,
    help="Print the plan as JSON or as a Markdown summary table.",
)
@click.option(
    "--output",
    type=click.Path(dir_okay=False, path_type=Path),
    help="Write the JSON plan to this file and print the summary table instead.",
)
@click.option(
    "--manifest",
    type=click.Path(dir_okay=False, path_type=Path),
    help="Also write the sweep's manifest (what its jobs measure: options, plan digest, "
    "configs as parsed, runner labels, recipe and template bytes) to this file.",
)
@click.option(
    "--durations",
    type=click.Path(exists=True, dir_okay=False, path_type=Path),
    help="A job-timings file (`infx sweep timings`): estimate each job from the recorded "
    "durations of earlier jobs of the same identity.",
)
@click.option(
    "--budget",
    "category",
    default=None,
    help="Check the estimate against this category's budget in infx.toml at --base: a "
    "primary sweep label, or push. --from-event takes it from the event.",
)
@click.option(
    "--estimate",
    "estimate_file",
    type=click.Path(dir_okay=False, path_type=Path),
    help="Write every job's estimate, its source and the budget verdict as JSON.",
)
@click.option(
    "--rerun-record",
    type=click.Path(dir_okay=False, path_type=Path),
    help="Write what a later rerun of this run needs (rerun.json: the labels' flags, the "
    "run, the PR).",
)
@changelog_file
@master_configs
@runners_file
@strict_option
def plan(
    base: str | None,
    head: str | None,
    trim_conc: bool,
    all_evals: bool,
    evals_only: bool,
    from_event: bool,
    fmt: str,
    output: Path | None,
    manifest: Path | None,
    durations: Path | None,
    category: str | None,
    estimate_file: Path | None,
    rerun_record: Path | None,
    path: str,
    config_globs: tuple[str, ...],
    runners_path: str,
    strict: bool,
) -> None:
    """Plan the sweep for the changelog entries added between BASE and HEAD.

    Master configs and runners are read at HEAD (or in the working tree). Entries
    whose layout breaks a gate rule still plan, with a warning; a diff that edits
    or deletes history lines does not.
    """
    root = git.root()
    decision = Decision(True, "options", plan=PlanOptions(trim_conc, all_evals, evals_only))
    event_name = "cli"
    payload: dict = {}
    if from_event:
        if base or head or trim_conc or all_evals or evals_only or category:
            raise UsageError("--from-event takes the refs and flags from the event; drop them")
        decision, event_name, payload = _event_decision(root)
        if not decision.run:
            click.echo(f"nothing to plan: {decision.reason}")
            return
        base, head = _event_refs(event_name, payload)
        category = decision.label or PUSH
    if base is None:
        base = branch_base(root)
    planned = plan_change(root, base, head, path, config_globs, runners_path, decision.plan, strict)
    result = planned.result
    for warning in result.warnings:
        click.echo(f"infx: warning: {warning}", err=True)
    if manifest is not None:
        job_files = settings(click.get_current_context()).job_files
        record = manifest_of(planned, decision.sweep_options(event_name), job_files)
        atomic_write(manifest, (json.dumps(record, indent=2) + "\n").encode("utf-8"))
    planned_json = result.plan.as_json()
    if decision.canary:
        row, remaining = canary(planned_json)
        planned_json = {"canary": [row] if row else [], "remaining": remaining}
    text = json.dumps(planned_json, indent=2)
    budgets = load_settings_at(root, base).budget
    costs, wall, verdict = _costs(
        result.plan, durations, decision.agentx_fast, planned.runner_info, category, budgets
    )
    if from_event and event_name == "pull_request" and verdict.budget is not None:
        verdict = _labeler_checked(root, verdict, decision.label, payload)
    if from_event or estimate_file is not None:
        _write_estimate(estimate_file, costs, verdict, wall, from_event)
    if rerun_record is not None:
        _write_record(root, rerun_record, decision, category or PUSH, event_name, payload)
    if fmt == "json" and output is None:
        click.echo(text)
        return
    if output is not None:
        atomic_write(output, (text + "\n").encode("utf-8"))
    table = summary_table(
        result.plan, planned.inputs.head.masters, costs, wall, verdict if category else None
    )
    click.echo(table)
    append_summary(f"### Sweep plan\n\n{table}\n")


def _labeler_checked(root: Path, verdict: BudgetVerdict, role: str, payload: dict) -> BudgetVerdict:
    """The verdict, held for approval when the PR's budgeted sweep label was last added by
    someone without write permission, or by no one the timeline names; an API failure
    holds it too (read through the API: GITHUB_TOKEN with pull-requests: read)."""
    from dataclasses import replace

    from infx.context import repo_slug
    from infx.github.client import GitHub
    from infx.matrix.cost import labeler_hold

    name = load_settings(root).label(role)
    number = (payload.get("pull_request") or {}).get("number")
    try:
        if not isinstance(number, int):
            raise UsageError("the event names no pull request")
        gh = GitHub(repo_slug(None))

        sender = (payload.get("sender") or {}).get("login")
        this_label = (payload.get("label") or {}).get("name")

        def fetch() -> tuple[str | None, str | None]:
            if payload.get("action") == "labeled" and this_label == name and sender:
                adder: str | None = str(sender)  # this event added it (the timeline may lag)
            else:
                events = sorted(gh.label_events(number), key=lambda e: e.created_at)
                added = [e for e in events if e.action == "labeled"]
                adders = [e.actor for e in added if e.label == name and e.actor]
                adder = adders[-1] if adders else None
            return adder, gh.permission(adder) if adder else None

        adder, permission = gh.decide(fetch)
        held = labeler_hold(name, adder, permission)
    except InfxError as exc:
        held = f"who added label {name} could not be read ({exc})"
    checked = replace(verdict, held=held)
    if checked.over and held:
        click.echo(f"infx: {held}: the sweep waits for approval", err=True)
    return checked


def _write_record(
    root: Path, target: Path, decision: Decision, category: str, event_name: str, payload: dict
) -> None:
    """rerun.json: what a rerun of this run needs to know (infx.sweep.record.RunRecord)."""
    import os

    from infx.rerun.facts import write_json
    from infx.sweep.record import RunRecord

    run_id = int(os.environ.get("GITHUB_RUN_ID", "0") or 0)
    pr = (payload.get("pull_request") or {}).get("number")
    record = RunRecord(
        run_id=run_id,
        event=event_name,
        sha=git.git(["rev-parse", "HEAD"], root).strip(),
        pr=pr if isinstance(pr, int) else None,
        category=category,
        options=decision.plan,
        canary=decision.canary,
        fail_fast=decision.fail_fast,
        agentx_fast=decision.agentx_fast,
        root=run_id,
    )
    write_json(target, record.as_json())


def _costs(
    plan: Plan,
    durations: Path | None,
    agentx_fast: bool,
    runners: RunnerInfo,
    category: str | None,
    budgets: Mapping[str, float],
) -> tuple[list[JobCost], dict[str, float], BudgetVerdict]:
    """Every job's estimate, the wall time per pool and the budget verdict."""
    from infx.matrix.cost import estimate, verdict, wall_minutes
    from infx.matrix.summary import plan_rows
    from infx.matrix.timings import parse_timings

    recorded = (
        parse_timings(durations.read_bytes(), str(durations)).durations() if durations else {}
    )
    costs = estimate(plan_rows(plan.as_json()), recorded, agentx_fast)
    labels = runners.runners.labels if runners.runners is not None else {}
    wall = wall_minutes(costs, {label: len(nodes) for label, nodes in labels.items()})
    return costs, wall, verdict(costs, category or "", budgets)


def _write_estimate(
    target: Path | None,
    costs: list[JobCost],
    verdict: BudgetVerdict,
    wall: dict[str, float],
    outputs: bool,
) -> None:
    from infx.matrix.cost import estimate_document

    if target is not None:
        document = estimate_document(costs, verdict, wall)
        atomic_write(target, (json.dumps(document, indent=2) + "\n").encode("utf-8"))
    if outputs:
        set_outputs(
            {
                "over-budget": str(verdict.over).lower(),
                "gpu-hours": f"{verdict.gpu_hours:.1f}",
                "budget-verdict": verdict.text(),
            }
        )


@sweep.command("canary")
def canary_cmd() -> None:
    """Read a plan on stdin; print {"canary": [row], "remaining": plan-without-it}."""
    text = sys.stdin.read()
    try:
        payload = json.loads(text)
    except json.JSONDecodeError as exc:
        raise UsageError(f"stdin is not a JSON plan: {exc.msg} at line {exc.lineno}") from None
    except RecursionError:
        raise UsageError("stdin is not a JSON plan: nested too deeply") from None
    problems = schema_errors("sweep-matrix", payload)
    if problems:
        raise UsageError(f"stdin is not a sweep plan: {problems[0].message}")
    row, remaining = canary(payload)
    click.echo(json.dumps({"canary": [row] if row else [], "remaining": remaining}, indent=2))


@sweep.command()
@master_configs
@runners_file
@strict_option
def validate(config_globs: tuple[str, ...], runners_path: str, strict: bool) -> None:
    """Validate every master config and runners.yaml in the working tree."""
    root = git.root()
    masters = load_masters(root, None, config_globs)
    runner_info = load_runners(root, None, runners_path)
    problems = validate_configs(masters) + runner_info.problems
    if runner_info.runners is not None:
        problems += runner_label_problems(masters, runner_info.runners, strict)
    errors = [p for p in problems if p.severity == "error"]
    for problem in problems:
        click.echo(problem.text(), err=True)
    if errors:
        raise ConfigError(f"{len(errors)} config error(s)")
    click.echo(f"{len(masters)} config(s) valid")


@sweep.command()
def mode() -> None:
    """Decide from the event's sweep labels whether and how this run sweeps.

    Reads the Actions event (GITHUB_EVENT_PATH): a push to main, or a pull request with its
    labels, draft and fork state. Writes the decision as step outputs (GITHUB_OUTPUT):
    `run`, `reason`, `label`, `canary`, `fail-fast`, `agentx-fast`, `reusable`, `trim-conc`,
    `all-evals` and `evals-only`; prints them as JSON; exits 1 on contradicting labels."""
    decision, _, _ = _event_decision(git.root())
    set_outputs(decision.outputs())
    append_summary(
        f"### Sweep mode\n\n{'runs' if decision.run else 'skipped'}: {decision.reason}\n"
    )
    click.echo(json.dumps(decision.outputs()))


def _read_plan(plan_file: Path) -> dict:
    try:
        payload = json.loads(plan_file.read_text(encoding="utf-8"))
    except json.JSONDecodeError as exc:
        raise UsageError(f"{plan_file} is not JSON: {exc.msg}") from None
    except RecursionError:
        raise UsageError(f"{plan_file} is not JSON: nested too deeply") from None
    if not isinstance(payload, dict):
        raise UsageError(f"{plan_file} is not a sweep plan or canary output")
    return payload


@sweep.command()
@click.argument("plan_file", type=click.Path(exists=True, dir_okay=False, path_type=Path))
def outputs(plan_file: Path) -> None:
    """Write a plan's (or `canary` output's) chunk indices per bucket as job outputs."""
    values = bucket_outputs(_read_plan(plan_file))
    set_outputs(values)
    click.echo(json.dumps({k: v for k, v in values.items() if k != "changelog-metadata"}))


@sweep.command()
@click.argument("plan_file", type=click.Path(exists=True, dir_okay=False, path_type=Path))
@click.option(
    "--bucket", required=True, help=f"The plan's job family. One of: {', '.join(BUCKETS)}."
)
@click.option("--index", type=int, required=True, help="Chunk number from `sweep outputs`.")
def chunk(plan_file: Path, bucket: str, index: int) -> None:
    """Write one chunk of a bucket (at most 256 rows) as the job output `rows`, and the
    node each row is pinned to (`runs-on`, empty: the row's runner label) from the
    runs-on.json a rerun writes beside its plan."""
    from infx.rerun.facts import pins_for
    from infx.rerun.rules import row_id

    rows = chunk_rows(_read_plan(plan_file), bucket, index)
    pins = pins_for(plan_file)
    nodes = [pins.get(row_id(row), "") for row in rows]
    set_outputs(
        {
            "rows": json.dumps(rows, separators=(",", ":")),
            "runs-on": json.dumps(nodes, separators=(",", ":")),
        }
    )
    pinned = sum(1 for node in nodes if node)
    suffix = f", {pinned} pinned to a node" if pinned else ""
    click.echo(f"{bucket} chunk {index}: {len(rows)} row(s){suffix}")


@sweep.command("row-env")
@click.option(
    "--runner-name", envvar="RUNNER_NAME", default="", help="The runner node (RUNNER_NAME)."
)
def row_env_cmd(runner_name: str) -> None:
    """Turn the matrix row in $ROW into KEY=value lines for GITHUB_ENV, plus RECIPE_SCRIPT."""
    import os

    text = os.environ.get("ROW", "")
    try:
        row = json.loads(text)
    except json.JSONDecodeError as exc:
        raise UsageError(f"ROW is not a JSON matrix row: {exc.msg}") from None
    if not isinstance(row, dict):
        raise UsageError("ROW is not a JSON matrix row")
    lines = row_env(row)
    lines["RECIPE_SCRIPT"] = recipe_path(row, runner_name)
    for key, value in lines.items():
        click.echo(f"{key}={value}")


def _register() -> None:
    from infx.cli.sweep_runs import register

    register(sweep)


_register()
