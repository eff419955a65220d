"""`infx sweep ...`: plan the benchmark matrix of a changelog diff, pick a canary, validate configs."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import click

from infx import git
from infx.changelog import CHANGELOG_FILE
from infx.changelog.check import check as check_changelog
from infx.changelog.report import as_text
from infx.errors import ConfigError, InfxError, UsageError
from infx.github.actions import append_summary, event, set_outputs
from infx.matrix import MASTER_GLOB, RUNNERS_FILE
from infx.matrix.plan import PlanOptions, build_plan, canary, select_configs
from infx.matrix.sources import load_masters, load_runners
from infx.matrix.summary import summary_table
from infx.matrix.validate import ConfigProblem, runner_label_problems, validate_configs
from infx.schemas import errors as schema_errors
from infx.workflows.labels import decide
from infx.workflows.rows import bucket_outputs, chunk_rows, recipe_path, row_env


@click.group()
def sweep() -> None:
    """Plan and check benchmark sweeps."""


config_option = click.option(
    "--config",
    "config_glob",
    default=MASTER_GLOB,
    show_default=True,
    help="Glob of master config files.",
)
runners_option = click.option("--runners", "runners_path", default=RUNNERS_FILE, show_default=True)
strict_option = click.option(
    "--strict", is_flag=True, help="Treat warnings (unknown runner labels) as errors."
)


def _report(problems: list[ConfigProblem]) -> None:
    """Print every problem; errors (not warnings) stop the command."""
    errors = [p for p in problems if p.severity == "error"]
    for problem in problems:
        click.echo(problem.text(), err=True)
    if errors:
        raise ConfigError(f"{len(errors)} config error(s)")


@sweep.command()
@click.option("--base", required=True, help="Ref before the change (e.g. origin/main).")
@click.option("--head", default=None, help="Ref with the change; default: the working tree.")
@click.option("--trim-conc", is_flag=True, help="Keep only the lowest concurrency of each curve.")
@click.option("--all-evals", is_flag=True, help="Run an eval at every planned point.")
@click.option("--evals-only", is_flag=True, help="Plan evals only, no throughput rows.")
@click.option(
    "--agentic-only", is_flag=True, help="Plan agentic-coding points only (label agentx-fast)."
)
@click.option(
    "--format", "fmt", type=click.Choice(["json", "summary"]), default="json", show_default=True
)
@click.option("--file", "path", default=CHANGELOG_FILE, show_default=True)
@config_option
@runners_option
@strict_option
def plan(
    base: str,
    head: str | None,
    trim_conc: bool,
    all_evals: bool,
    evals_only: bool,
    agentic_only: bool,
    fmt: str,
    path: str,
    config_glob: str,
    runners_path: str,
    strict: bool,
) -> None:
    """Plan the sweep for the changelog entries appended between BASE and HEAD."""
    root = git.root()
    base_tree = git.resolve(base, root)
    head_tree = git.resolve(head, root) if head else None
    base_bytes = git.read_at(base_tree, path, root)
    head_bytes = git.read_at(head_tree, path, root)
    masters = load_masters(root, head_tree, config_glob)
    result = check_changelog(base_bytes, head_bytes, None, masters.keys())
    if not result.ok:
        click.echo(as_text(path, result), err=True)
        sys.exit(1)

    entries = [e.data for e in result.entries]
    selections = select_configs(entries, masters.keys())
    runner_info = load_runners(root, head_tree, runners_path)
    problems = validate_configs(masters, selections) + runner_info.problems
    if runner_info.runners is not None:
        problems += runner_label_problems(masters, runner_info.runners, strict, selections)
    _report(problems)

    base_masters = None
    if any(s.append_only for s in selections.values()):
        base_masters = load_masters(root, base_tree, config_glob)
    metadata = {"base_ref": base, "head_ref": head or "WORKTREE", "entries": entries}
    result_plan = build_plan(
        selections,
        masters,
        runner_info.hardware,
        PlanOptions(trim_conc, all_evals, evals_only, agentic_only),
        base_masters,
        metadata,
    )
    payload = result_plan.as_json()
    problems = schema_errors("sweep-matrix", payload)
    if problems:
        raise UsageError(
            f"internal: plan does not match schemas/sweep-matrix.schema.json: {problems[0].message}"
        )
    if fmt == "json":
        click.echo(json.dumps(payload, indent=2))
        return
    table = summary_table(result_plan)
    click.echo(table)
    append_summary(f"### Sweep plan\n\n{table}\n")


@sweep.command("canary")
def canary_cmd() -> None:
    """Read a plan on stdin; print {"canary": [row], "remaining": plan-without-it}."""
    text = sys.stdin.read()
    try:
        payload = json.loads(text)
    except json.JSONDecodeError as exc:
        raise UsageError(f"stdin is not a JSON plan: {exc.msg} at line {exc.lineno}") from None
    problems = schema_errors("sweep-matrix", payload)
    if problems:
        raise UsageError(f"stdin is not a sweep plan: {problems[0].message}")
    row, remaining = canary(payload)
    click.echo(json.dumps({"canary": [row] if row else [], "remaining": remaining}, indent=2))


@sweep.command()
@config_option
@runners_option
@strict_option
def validate(config_glob: str, runners_path: str, strict: bool) -> None:
    """Validate every master config and runners.yaml in the working tree."""
    root = git.root()
    masters = load_masters(root, None, config_glob)
    if not masters.configs:
        raise UsageError(f"no master config files match {config_glob!r}")
    runner_info = load_runners(root, None, runners_path)
    problems = validate_configs(masters) + runner_info.problems
    if runner_info.runners is not None:
        problems += runner_label_problems(masters, runner_info.runners, strict)
    _report(problems)
    click.echo(f"{len(masters.configs)} config(s) valid")


@sweep.command()
def mode() -> None:
    """Decide from the Actions event (GITHUB_EVENT_PATH) whether and how to sweep; write outputs."""
    name, payload = event()
    pr = payload.get("pull_request") or {}
    labels = [label.get("name", "") for label in pr.get("labels", []) if isinstance(label, dict)]
    head_repo = ((pr.get("head") or {}).get("repo") or {}).get("full_name")
    repository = (payload.get("repository") or {}).get("full_name")
    head_message = ""
    head_sha = (pr.get("head") or {}).get("sha")
    if head_sha:
        try:
            head_message = git.git(["log", "-1", "--format=%B", head_sha])
        except InfxError:
            head_message = ""
    decision = decide(
        name,
        str(payload.get("action", "")),
        labels,
        str((payload.get("label") or {}).get("name", "")),
        bool(pr.get("draft", False)),
        bool(pr) and head_repo != repository,
        head_message,
    )
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
@click.option("--bucket", required=True, help="Job family, e.g. single or multinode-evals.")
@click.option("--index", type=int, required=True, help="Chunk number from `sweep outputs`.")
def chunk(plan_file: Path, bucket: str, index: int) -> None:
    """Write one chunk of a bucket (at most 256 rows) as the job output `rows`."""
    rows = chunk_rows(_read_plan(plan_file), bucket, index)
    set_outputs({"rows": json.dumps(rows, separators=(",", ":"))})
    click.echo(f"{bucket} chunk {index}: {len(rows)} row(s)")


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
