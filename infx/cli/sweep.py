"""`infx sweep ...`: plan the benchmark matrix of a changelog diff, pick a canary, validate configs."""

from __future__ import annotations

import json
import os
import sys

import click

from infx import git
from infx.changelog import CHANGELOG_FILE
from infx.changelog.check import check as check_changelog
from infx.changelog.report import as_text
from infx.errors import ConfigError, UsageError
from infx.matrix import MASTER_GLOB, RUNNERS_FILE
from infx.matrix.plan import PlanOptions, build_plan, canary, select_configs
from infx.matrix.sources import load_masters, load_runners, read_at
from infx.matrix.summary import summary_table
from infx.matrix.validate import runner_label_problems, validate_configs
from infx.schemas import errors as schema_errors


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


def _report(problems: list, strict: bool) -> None:
    errors = [p for p in problems if p.severity == "error"]
    for problem in problems:
        click.echo(problem.text(), err=True)
    if errors:
        raise ConfigError(f"{len(errors)} config problem(s); nothing was planned")


@sweep.command()
@click.option("--base", required=True, help="Ref before the change (e.g. origin/main).")
@click.option("--head", default=None, help="Ref with the change; default: the working tree.")
@click.option("--trim-conc", is_flag=True, help="Keep only the lowest concurrency of each curve.")
@click.option("--all-evals", is_flag=True, help="Run an eval at every planned point.")
@click.option("--evals-only", is_flag=True, help="Plan evals only, no throughput rows.")
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
    base_bytes = read_at(root, base_tree, path)
    head_bytes = read_at(root, head_tree, path)
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
    _report(problems, strict)

    base_masters = None
    if any(s.append_only for s in selections.values()):
        base_masters = load_masters(root, base_tree, config_glob)
    metadata = {"base_ref": base, "head_ref": head or "WORKTREE", "entries": entries}
    result_plan = build_plan(
        selections,
        masters,
        runner_info.hardware,
        PlanOptions(trim_conc, all_evals, evals_only),
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
    target = os.environ.get("GITHUB_STEP_SUMMARY")
    if target:
        with open(target, "a", encoding="utf-8") as fh:
            fh.write(f"### Sweep plan\n\n{table}\n")


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
    _report(problems, strict)
    click.echo(f"{len(masters.configs)} config(s) valid")
