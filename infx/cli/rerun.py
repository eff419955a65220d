"""`infx sweep timings|triage|status|rerun|rerun-plan|dispatch-rerun` and `infx
rerun-failed`: what a sweep costs, why its jobs failed, and running again only what has
no valid result. Each command parses, reads through the edge (`infx.rerun.reads`), calls
its use case and writes the outcome."""

from __future__ import annotations

from pathlib import Path

import click

from infx import git
from infx.cli.options import (
    EXISTING_FILE,
    FILE,
    FOLDER,
    emit,
    env_option,
    request,
    shown,
    workflow_option,
)
from infx.cli.options import api_repo_option as repo_option
from infx.rerun import cases, decide, reads
from infx.rerun.jobs import TriageRequest, timings_outcome, triage_outcome
from infx.rerun.plan import RerunPlanRequest, rerun_plan_outcome
from infx.rerun.repeat import RepeatRequest
from infx.rerun.writes import carry_out, set_budget_status
from infx.sweep.budget import StatusRequest

# The help of the options whose text runs long, by command and flag.
HELP = {
    "--scope": "missing: every row without a valid result; infra: the rows whose job failed for an infra reason (and, when every failure was infra, the rows they kept from running); repeat: the rows of the configs the source run's verdict left unconfirmed, measured again (results/verdict/verdict.json under --source-dir).",
    "timings --runs": "How many of the newest sweeps' timings to merge.",
    "triage --plan": "This run's sweep-plan folder (sweep.json, rerun.json, timings.json).",
    "triage --previous": "The source run's sweep-jobs folder, for a rerun: its attempts count too.",
    "--results": "This run's downloaded job results (bmk_*/eval_* folders; repeatable). Only a successful job that left a valid result there is a duration sample.",
    "--estimate": "The estimate.json `sweep plan --estimate` wrote.",
    "status --approved": "In the job that waited in the gpu-budget environment: pass only a required reviewer's recorded approval of this run (--run-id), and say who approved.",
    "rerun --automatic": "The automatic retry after a failed sweep: only a failed run that is not itself a retry.",
    "rerun --decide-only": "Read-only: write the dispatch as the step output `dispatch` for `infx sweep dispatch-rerun` in a job that may start workflows.",
    "rerun-plan --source-dir": "Where the source run's artifacts were downloaded: sweep-plan/, sweep-jobs/, and its results (results_bmk/ and the per-job bmk_*/eval_* folders) below results/.",
    "--manifest": "The source run's sweep-manifest.json: what it measured, which the rerun carries.",
    "rerun-plan --output-dir": "This run's sweep-plan folder to write.",
    "rerun-plan --durations": "Main's job timings (`infx sweep timings`): a rerun of a PR's sweep is estimated from them, never from its source's own.",
    "repeat --verdict": "This run's verdict (`infx results compare --verdict-out`); none: nothing to repeat.",
    "repeat --record": "This run's rerun.json (its sweep-plan artifact): the lineage's repeats so far.",
    "rerun-failed --decide-only": "Read-only: write the reaction and the dispatch as step outputs for `infx sweep dispatch-rerun` in a job that may write.",
}
SCOPES = click.Choice(["missing", "infra", "repeat"])
scope_option = shown("--scope", type=SCOPES, default="missing", help=HELP["--scope"])
run_id_option = env_option("--run-id", "GITHUB_RUN_ID", required=True)


def carried(decided: cases.Decided) -> None:
    """Say what was decided, write it, then start the workflow and react as it says."""
    for line in decided.said:
        click.echo(line)
    if decided.outcome is not None and decided.gh is not None:
        emit(decided.outcome)
        for line in carry_out(decided.gh, decided.outcome):
            click.echo(line)


@click.command("timings")
@click.option("--out", required=True, type=FILE, help="File to write.")
@shown("--runs", type=click.IntRange(1, 10), default=3, help=HELP["timings --runs"])
@workflow_option
@repo_option
def timings(out: Path, runs: int, workflow: str, repo: str | None) -> None:
    """Fetch the job timings recorded by main's newest sweeps (their sweep-jobs artifacts):
    pushes to the main branch only, whose jobs ran main's own workflow."""
    from infx.cli.options import settings

    main = settings(click.get_current_context()).main_branch
    emit(timings_outcome(out, *reads.recent_timings(reads.client(repo), runs, workflow, main)))


@click.command("triage")
@click.option("--plan", "plan_dir", required=True, type=FOLDER, help=HELP["triage --plan"])
@click.option("--previous", type=FOLDER, help=HELP["triage --previous"])
@click.option("--results", "results_dirs", multiple=True, required=True, type=FOLDER, help=HELP["--results"])  # fmt: skip
@click.option("--out-dir", required=True, type=FOLDER, help="Output.")
@run_id_option
@repo_option
def triage(**options: object) -> None:
    """Classify this run's failed benchmark jobs, tabulate them per class and runner with the
    success rate per pool, and record the durations of its successful jobs that left a
    valid result (a job that passed without one measured nothing: its minutes would make
    the next estimate too low)."""
    asked = request(TriageRequest, options)
    emit(triage_outcome(reads.triage_facts(asked), asked.out_dir))


@click.command("status")
@click.option("--estimate", "estimate_file", required=True, type=EXISTING_FILE, help=HELP["--estimate"])  # fmt: skip
@click.option("--sha", required=True, help="The commit to set the status on (the PR head).")
@click.option("--approved", is_flag=True, help=HELP["status --approved"])
@click.option("--target-url", default="", help="Link of the status (the run).")
@env_option("--run-id", "GITHUB_RUN_ID", default="")
@repo_option
def status(**options: object) -> None:
    """Show the estimate against the budget on the commit (status `infx/gpu-budget`); with
    --approved, in the job that waited for approval, first check that a required reviewer
    of the environment approved this run (exit 1 and a "held" status otherwise)."""
    emit(set_budget_status(request(StatusRequest, options)))


@click.command("rerun")
@click.argument("run_id")
@scope_option
@click.option("--automatic", is_flag=True, help=HELP["rerun --automatic"])
@click.option("--dry-run", is_flag=True, help="Say what would run; dispatch nothing.")
@click.option("--decide-only", is_flag=True, help=HELP["rerun --decide-only"])
@workflow_option
@repo_option
def rerun(**options: object) -> None:
    """Run again only the jobs of run RUN_ID that left no valid result.

    Dispatches the sweep workflow on the run's branch with `rerun-of`; that run carries
    the original plan, runs the canary first when the recipe changed since, and merges
    its results with the source run's."""
    carried(cases.rerun(request(decide.RerunRequest, options)))


@click.command("rerun-plan")
@click.option("--source-run", required=True, help="The run to rerun (input rerun-of).")
@click.option("--source-dir", required=True, type=FOLDER, help=HELP["rerun-plan --source-dir"])
@click.option("--manifest", "manifest_file", required=True, type=EXISTING_FILE, help=HELP["--manifest"])  # fmt: skip
@click.option("--output-dir", required=True, type=FOLDER, help=HELP["rerun-plan --output-dir"])
@click.option("--durations", type=FILE, default=None, help=HELP["rerun-plan --durations"])
@scope_option
@click.option("--pr", "pr_text", default="", help="The PR the source run swept (input pr-number).")
@run_id_option
@env_option("--ref-name", "GITHUB_REF_NAME", required=True)
@workflow_option
@repo_option
def rerun_plan(**options: object) -> None:
    """Plan a rerun run: the source run's rows without a valid result (the canary first when
    a file its jobs read changed since), pinned to other nodes after infra failures; write
    this run's sweep.json, source-plan.json, rerun.json, runs-on.json and estimate.json, and
    the job outputs the workflow reads (run, fail-fast, agentx-fast, over-budget)."""
    asked = request(RerunPlanRequest, options)
    emit(rerun_plan_outcome(asked, reads.rerun_plan_facts(git.root(), asked)))


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
    carried(cases.dispatch(dispatch, reaction, workflow, repo))


@click.command("repeat")
@click.option("--verdict", "verdict_file", required=True, type=FILE, help=HELP["repeat --verdict"])
@click.option("--record", "record_file", required=True, type=FILE, help=HELP["repeat --record"])
@click.option("--pr", "pr_text", default="", help="The PR this run swept.")
@click.option("--ref", required=True, help="The PR's head branch (where the rerun runs).")
@click.option("--head-repo", default="", help="The repository of the PR's head commits.")
@click.option("--dry-run", is_flag=True, help="Say what would run; dispatch nothing.")
@run_id_option
@workflow_option
@repo_option
def repeat(**options: object) -> None:
    """With `[results] confirm-repeats` on, dispatch a rerun with scope repeat of this run
    when its verdict left configs unconfirmed: their rows run again, priced and held by the
    budget gate like any rerun, and that run's compare pools them with this run's."""
    carried(cases.repeat(request(RepeatRequest, options)))


@click.command("rerun-failed")
@click.option("--decide-only", is_flag=True, help=HELP["rerun-failed --decide-only"])
@workflow_option
@repo_option
def rerun_failed(decide_only: bool, workflow: str, repo: str | None) -> None:
    """Handle a `/rerun-failed [<run_id>]` comment on a PR: a maintainer's request to run
    again the jobs of the PR's newest sweep (or the pinned run) that left no valid result."""
    carried(cases.rerun_failed(decide_only, workflow, repo))


@click.command("split-pairs")
@click.argument("table_file", type=EXISTING_FILE)
@click.option("--pairs", "pairs_file", required=True, type=EXISTING_FILE, help="The repeat's pairs.json (its sweep-plan folder).")  # fmt: skip
@click.option("--out-dir", required=True, type=FOLDER, help="Where to write results.json (this PR's half), base.json (main's) and other.json (rows of no pair: a canary).")  # fmt: skip
def split_pairs(table_file: Path, pairs_file: Path, out_dir: Path) -> None:
    """Split a paired repeat's own table (TABLE_FILE, `infx results collect`) into this
    PR's measurements and main's, which its compare takes as --repeat and --baseline-repeat."""
    from infx.rerun.paired import halves
    from infx.results.ingest.files import load_results, write_json

    split = halves(load_results(table_file), reads.read_pairs(pairs_file))
    write_json(out_dir / "results.json", split.pr)
    if split.base["rows"]:
        write_json(out_dir / "base.json", split.base)
    if split.other["rows"]:
        write_json(out_dir / "other.json", split.other)
    click.echo(
        f"{len(split.pr['rows'])} row(s) of this PR's image, {len(split.base['rows'])} of "
        f"main's beside them ({split.pairs} pair(s)), {len(split.other['rows'])} of no pair "
        "(not pooled)"
        + (
            f"; {split.shared} point(s) of one recipe on both sides kept as the PR's"
            if split.shared
            else ""
        )
    )
