"""`infx sweep ...`: plan the benchmark matrix of a changelog diff, pick a canary, validate
configs. Each command parses, reads through the edge, calls its use case and writes the
outcome; the reruns, triage and budget commands are in `infx.cli.rerun`."""

from __future__ import annotations

import os
import sys
from pathlib import Path

import click

from infx import git
from infx.cli import LazyGroup
from infx.cli.options import (
    EXISTING_FILE,
    FILE,
    base_option,
    branch_base,
    changelog_file,
    emit,
    master_configs,
    request,
    runners_file,
    shown,
    workflow_option,
)
from infx.cli.options import api_repo_option as repo_option
from infx.matrix.rows import BUCKETS
from infx.matrix.sources import working_tree
from infx.sweep import facts, jobs
from infx.sweep.plan import PlanRequest, mode_outcome, plan_outcome

# The help of the options whose text runs long, by flag.
HELP = {
    "--from-event": "Inside Actions: take the refs and the label decision (trim, evals, canary) from the event (GITHUB_EVENT_PATH), as `sweep mode` decides; with a canary, --output holds the canary split.",
    "--format": "json: the plan as JSON; text: the summary table in GitHub Markdown, as the step summary gets it (a terminal shows its escapes; `summary`, its old name, still works).",
    "--output": "Write the JSON plan to this file and print the summary table instead.",
    "--manifest": "Also write the sweep's manifest (what its jobs measure: options, plan digest, configs as parsed, runner labels, recipe and template bytes) to this file.",
    "--durations": "A job-timings file (`infx sweep timings`): estimate each job from the recorded durations of earlier jobs of the same identity.",
    "--budget": "Check the estimate against this category's budget in infx.toml at --base: a primary sweep label, or push. --from-event takes it from the event.",
    "--estimate": "Write every job's estimate, its source and the budget verdict as JSON.",
    "--rerun-record": "Write what a later rerun of this run needs (rerun.json: the labels' flags, the run, the PR).",
    "--strict": "Treat warnings (unknown runner labels) as errors.",
}
FORMATS = click.Choice(["json", "text", "summary"])  # the vocabulary of every --format
strict_option = click.option("--strict", is_flag=True, help=HELP["--strict"])


# The reruns, triage, budget and review commands, imported only when one runs (they load
# PyGithub): name -> module of infx.cli.
LAZY = dict.fromkeys(("timings", "triage", "status", "rerun", "rerun-plan", "dispatch-rerun", "repeat", "split-pairs"), "rerun")  # fmt: skip
LAZY |= dict.fromkeys(("priority", "priority-labels", "success-rate"), "review")


@click.group(cls=LazyGroup, lazy={n: f"{m}:{n.replace('-', '_')}" for n, m in LAZY.items()})
def sweep() -> None:
    """Plan and check benchmark sweeps."""


@sweep.command()
@base_option
@click.option("--head", default=None, help="Ref with the change; default: the working tree.")
@click.option("--trim-conc", is_flag=True, help="Keep only the lowest concurrency of each curve.")
@click.option("--all-evals", is_flag=True, help="Run an eval at every eligible planned point.")
@click.option("--evals-only", is_flag=True, help="Plan evals only, no throughput rows.")
@click.option("--from-event", is_flag=True, help=HELP["--from-event"])
@shown("--format", "fmt", type=FORMATS, default="json", help=HELP["--format"])
@click.option("--output", type=FILE, help=HELP["--output"])
@click.option("--manifest", type=FILE, help=HELP["--manifest"])
@click.option("--durations", type=EXISTING_FILE, help=HELP["--durations"])
@click.option("--budget", "category", default=None, help=HELP["--budget"])
@click.option("--estimate", "estimate_file", type=FILE, help=HELP["--estimate"])
@click.option("--rerun-record", type=FILE, help=HELP["--rerun-record"])
@changelog_file
@master_configs
@runners_file
@strict_option
def plan(**options: object) -> None:
    """Plan the sweep for the changelog entries added between BASE and HEAD.

    Master configs and runners are read at HEAD (or in the working tree). Entries
    whose layout breaks a gate rule still plan, with a warning; a diff that edits
    or deletes history lines does not.
    """
    wanted = request(PlanRequest, options)
    emit(plan_outcome(wanted, facts.read_plan_facts(git.root(), wanted, branch_base)))


@sweep.command("canary")
def canary_cmd() -> None:
    """Read a plan on stdin; print {"canary": [row], "remaining": plan-without-it}."""
    emit(jobs.canary_outcome(sys.stdin.read()))


@sweep.command()
@master_configs
@runners_file
@strict_option
def validate(config_globs: tuple[str, ...], runners_path: str, strict: bool) -> None:
    """Validate every master config and runners.yaml in the working tree."""
    masters, found, choice = working_tree(git.root(), config_globs, runners_path)
    emit(jobs.validate_outcome(masters, found, strict, choice))


@sweep.command()
def mode() -> None:
    """Decide from the event's sweep labels whether and how this run sweeps.

    Reads the Actions event (GITHUB_EVENT_PATH): a push to main, or a pull request with its
    labels, draft and fork state. Writes the decision as step outputs (GITHUB_OUTPUT):
    `run`, `reason`, `label`, `canary`, `fail-fast`, `agentx-fast`, `reusable`, `trim-conc`,
    `all-evals` and `evals-only`; prints them as JSON; exits 1 on contradicting labels."""
    emit(mode_outcome(facts.read_event(git.root())))


@sweep.command()
@click.argument("plan_file", type=EXISTING_FILE)
def outputs(plan_file: Path) -> None:
    """Write a plan's (or `canary` output's) chunk indices per bucket as job outputs."""
    emit(jobs.outputs_outcome(facts.read_plan_file(plan_file)))


@sweep.command()
@click.argument("plan_file", type=EXISTING_FILE)
@click.option("--bucket", required=True, help=f"The plan's job family. One of: {', '.join(BUCKETS)}.")  # fmt: skip
@click.option("--index", type=int, required=True, help="Chunk number from `sweep outputs`.")
def chunk(plan_file: Path, bucket: str, index: int) -> None:
    """Write one chunk of a bucket (at most 256 rows) as the job output `rows`, the node
    each row is pinned to (`runs-on`, empty: the row's runner label) from the runs-on.json
    a rerun writes beside its plan, and each row's master config (`config-keys`) from the
    config-keys.json `sweep plan` writes beside it."""
    document, found = facts.read_plan_file(plan_file), facts.read_origins(plan_file)
    emit(jobs.chunk_outcome(document, bucket, index, facts.read_pins(plan_file), found))


@sweep.command("row-env")
@click.option("--runner-name", envvar="RUNNER_NAME", default="", help="The runner node (RUNNER_NAME).")  # fmt: skip
def row_env_cmd(runner_name: str) -> None:
    """Turn the matrix row in $ROW into KEY=value lines for GITHUB_ENV, plus RECIPE_SCRIPT
    and the row's master config ($CONFIG_KEY) as INFX_CONFIG_KEY."""
    environ = os.environ
    emit(jobs.row_env_outcome(environ.get("ROW", ""), runner_name, environ.get("CONFIG_KEY", "")))


@sweep.command()
@workflow_option
@repo_option
def supersede(workflow: str, repo: str | None) -> None:
    """Cancel the pull request's older sweep runs, when this event's sender may push.

    A label or ready-for-review event's run has a concurrency group of its own, so it
    cancels nothing by itself: a triager's toggle must not stop a maintainer's sweep. Run
    in a job of its own (actions: write): for a sender with write, maintain or admin
    permission (a push needs none), cancels the workflow's unfinished runs of the PR's
    branch older than this one; for anyone else, nothing."""
    for line in facts.cancel_superseded(workflow, repo):
        click.echo(line)
