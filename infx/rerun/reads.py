"""The reads of the rerun use cases (`sweep timings`, `triage`, `rerun`, `rerun-plan`,
`/rerun-failed`), in the order each needs them: GitHub through the client's metered
`decide`, the artifacts a workflow downloaded, and this checkout. Where a refusal makes
further reads pointless, the pure rules say so and reading stops; nothing is decided here.
"""

from __future__ import annotations

import json
from dataclasses import replace
from pathlib import Path
from typing import Any

from infx import git
from infx.errors import InfxError, UsageError
from infx.github.actions import CommentEvent
from infx.github.client import GitHub, Job, Pull, Run
from infx.github.permissions import WRITE_PERMISSIONS
from infx.github.values import Approval, Environment
from infx.matrix.cost import node_gpus, priced_sizes
from infx.matrix.inputs import digests_at, manifest_of
from infx.matrix.options import PlanOptions
from infx.matrix.rows import MatrixRow
from infx.matrix.sources import Planned, load_runners, node_gpus_at, plan_change
from infx.matrix.timings import Timings, parse_timings
from infx.rerun.decide import (
    USAGE,
    CommentFacts,
    Dispatch,
    RerunAsk,
    RunFacts,
    pinned_run,
    pull_refusal,
    refused,
    requester_refusal,
    retry_pr,
)
from infx.rerun.facts import (
    artifact_files,
    changed_files,
    folder_files,
    job_logs,
    newer_sweeps,
    plan_files,
    read_attempts,
    read_manifest,
    results_below,
    run_plan_files,
    run_results,
)
from infx.rerun.jobs import TriageFacts, TriageRequest, main_sweep, needs_results
from infx.rerun.plan import (
    RerunPlanFacts,
    RerunPlanRequest,
    lineage_root,
    lineage_runs,
    manifest_options,
    plan_changed,
    source_refusal,
)
from infx.rerun.repeat import RepeatRequest, read_verdict, read_verdict_file, repeat_points
from infx.rerun.rules import (
    JOBS_ARTIFACT,
    TIMINGS_FILE,
    TRIAGE_FILE,
    gpu_job_hours,
    jobs_of,
    plan_gpus,
    whole_plan,
)
from infx.results.ingest.files import load_floors
from infx.results.table.rows import Table
from infx.results.verdict.floors import Floors
from infx.settings import load as load_settings
from infx.settings import load_at
from infx.sweep.record import PLAN_ARTIFACT, RunRecord


def client(repo: str | None) -> GitHub:
    """The API client for --repo (default: GITHUB_REPOSITORY, infx.toml, the remotes)."""
    from infx.context import repo_slug

    return GitHub(repo_slug(repo))


def recent_timings(
    gh: GitHub, runs: int, workflow: str, main_branch: str = "main"
) -> tuple[Timings, list[int]]:
    """The job timings of the newest `runs` sweeps of main that left them (their sweep-jobs
    artifacts: pushes to the main branch of this repository's own workflow), merged, and
    which runs they came from. A pull request's run, a branch's rerun or a fork's run ran
    its own workflow, whose collect job could say every job took a minute."""

    def fetch() -> tuple[Timings, list[int]]:
        merged, used, checked = Timings(), list[int](), set[int]()
        for artifact in gh.artifacts_named(JOBS_ARTIFACT, limit=30):
            if len(used) == runs or len(checked) == 2 * runs:
                break
            if artifact.expired or artifact.run_id is None or artifact.run_id in checked:
                continue
            checked.add(artifact.run_id)
            if not main_sweep(gh.run(artifact.run_id), workflow, gh.slug, main_branch):
                continue
            files = artifact_files(gh, artifact.run_id, JOBS_ARTIFACT) or {}
            if TIMINGS_FILE in files:
                name = f"run {artifact.run_id}'s {TIMINGS_FILE}"
                merged = merged.merge(parse_timings(files[TIMINGS_FILE], name))
                used.append(artifact.run_id)
        return merged, used

    return gh.decide(fetch)


def approval_facts(gh: GitHub, run_id: int) -> tuple[Environment | None, list[Approval]]:
    """The gpu-budget environment's protection and this run's reviews of its deployments."""
    from infx.sweep.budget import ENVIRONMENT

    return gh.decide(lambda: (gh.environment(ENVIRONMENT), gh.run_approvals(run_id)))


def triage_facts(request: TriageRequest) -> TriageFacts:
    """This run's plan folder, every attempt of its jobs with their log tails, the source
    run's attempts (a rerun's) and this run's job results."""
    files = plan_files(folder_files(request.plan_dir), str(request.plan_dir))
    gh, run_id, previous = client(request.repo), int(request.run_id), request.previous

    def fetch() -> tuple[list[Job], dict[int, str | None]]:
        jobs = gh.jobs(run_id, every_attempt=True)
        return jobs, job_logs(gh, jobs)

    jobs, logs = gh.decide(fetch)
    earlier: list[dict[str, Any]] = []
    if previous is not None and (previous / TRIAGE_FILE).is_file():
        earlier = read_attempts(previous / TRIAGE_FILE)
    docs: list[Table] = []
    skipped: list[str] = []
    if needs_results(files):
        docs, skipped = _job_results(request.results_dirs)
    return TriageFacts(run_id, files, jobs, logs, earlier, docs, skipped)


def _job_results(folders: tuple[Path, ...]) -> tuple[list[Table], list[str]]:
    """The job result files below the folders (not tables: a rerun's table holds its
    source's points too), and the files skipped as no results."""
    from infx.results.ingest.files import job_files, load_results

    docs: list[Table] = []
    skipped: list[str] = []
    for path in job_files(list(folders)):
        try:
            docs.append(load_results(path))
        except InfxError as exc:
            skipped.append(str(exc))
    return docs, skipped


def rerun_facts(gh: GitHub, ask: RerunAsk) -> RunFacts:
    """A run, its sweep-plan artifact, the workflow's runs on its branch, newer sweeps and,
    when it may be rerun, its results, jobs and log tails (and, for an automatic retry of
    a PR's sweep, the PR), this checkout's floors and the sweep label's name."""

    def fetch() -> RunFacts:
        run = gh.run(ask.run_id)
        files = run_plan_files(gh, ask.run_id)
        branch = gh.branch_runs(ask.workflow, run.head_branch) if run.head_branch else []
        newer = newer_sweeps(gh, run)
        if files is None or files.record is None or run.status != "completed":
            return RunFacts(run, files, branch, newer)
        docs = run_results(gh, ask.run_id)
        jobs = gh.jobs(ask.run_id)
        return RunFacts(run, files, branch, newer, docs, jobs, job_logs(gh, jobs))

    found = gh.decide(fetch)
    number = retry_pr(found, ask)
    if number is not None and found.files is not None and found.files.record is not None:
        pull = gh.decide(lambda: gh.pull(number))
        found = replace(found, pull=pull, label=_label_name(found.files.record.category))
    if refused(found, ask) is None:
        found = replace(found, floors=_floors_here(), node_gpus=_node_gpus_here())
    return found


def _floors_here() -> Floors | None:
    """The accuracy floors of the checkout infx runs in (None outside one, or without)."""
    try:
        root = git.root()
        return load_floors(load_settings(root).accuracy_floors, root)
    except InfxError:
        return None


def _node_gpus_here() -> dict[str, int]:
    """GPUs per node of each runner label, from the checkout's runners.yaml (none: 8)."""
    try:
        root = git.root()
        runners = load_runners(root, None, load_settings(root).runners).runners
    except InfxError:
        return {}
    return node_gpus(runners.labels, runners.hardware) if runners is not None else {}


def _label_name(role: str) -> str:
    """The repository's name of a sweep label (its role's own name outside a checkout)."""
    try:
        return load_settings(git.root()).label(role)
    except InfxError:
        return role


def comment_facts(gh: GitHub, received: CommentEvent, workflow: str) -> CommentFacts:
    """What a `/rerun-failed` comment's decision reads: the comment as it is now, its
    author's permission, the PR, its newest sweep (unless the comment pins one) and that
    run's facts; reading stops at the first refusal."""
    matched, pinned = pinned_run(received.body)
    if not matched:
        return CommentFacts(USAGE)
    comment = gh.decide(lambda: gh.comment(received.comment_id))
    permission = gh.decide(lambda: gh.permission(comment.author))
    why = requester_refusal(comment.author, permission, WRITE_PERMISSIONS)
    if why is not None:
        return CommentFacts(why)
    pull = gh.decide(lambda: gh.pull(received.issue_number))
    why = pull_refusal(pull, gh.slug)
    if why is not None:
        return CommentFacts(why)
    run_id = pinned if pinned is not None else gh.decide(lambda: _newest_sweep(gh, pull))
    if run_id is None:
        return CommentFacts(f"PR #{pull.number} has no sweep to rerun")
    ask = RerunAsk(run_id, workflow, "missing", False, gh.slug, pr=pull.number)
    try:
        return CommentFacts(ask=ask, facts=rerun_facts(gh, ask))
    except InfxError as exc:
        return CommentFacts(str(exc))


def dispatched_run(gh: GitHub, dispatch: Dispatch | None) -> Run | None:
    """The run a decided dispatch would rerun, as the API has it now."""
    if dispatch is None:
        return None
    return gh.decide(lambda: gh.run(int(dispatch["inputs"]["rerun-of"])))


def _newest_sweep(gh: GitHub, pull: Pull) -> int | None:
    """The newest run on the PR's head branch, of one of its commits, that planned a sweep."""
    commits = set(gh.pull_commits(pull.number))
    found = [
        a
        for a in gh.artifacts_since(PLAN_ARTIFACT, pull.created_at)
        if a.head_branch == pull.head_ref and a.head_sha in commits and a.run_id is not None
    ]
    return max(found, key=lambda a: (a.created_at, a.id)).run_id if found else None


def rerun_plan_facts(root: Path, request: RerunPlanRequest) -> RerunPlanFacts:
    """The source run's artifacts (downloaded below --source-dir) and jobs, then, unless it
    may not be rerun, what its manifest says, whether the PR still plans that sweep, what
    changed since, and this checkout's floors, runners, budgets and files."""
    settings = load_settings(root)
    where = f"run {request.source_id}'s sweep-plan"
    files = plan_files(folder_files(request.source_dir / "sweep-plan"), where)
    gh = client(request.repo)

    def fetch() -> RerunPlanFacts:
        run = gh.run(request.source_id)
        branch = gh.branch_runs(request.workflow, run.head_branch) if run.head_branch else []
        jobs = gh.jobs(request.source_id)
        others = [r for r in branch if r.id != request.this_run]
        return RerunPlanFacts(files, run, others, newer_sweeps(gh, run), jobs, job_logs(gh, jobs))

    found = gh.decide(fetch)
    record = files.record
    why = source_refusal(request, found, gh.slug)
    if why is not None or record is None:
        return replace(found, refused=why or "")
    manifest = read_manifest(request.manifest_file)
    base_jobs: list[tuple[MatrixRow, bool]] = []
    if record.pr is not None:
        planned = plan_change(
            root, "HEAD^1", "HEAD", settings.changelog, settings.master_configs,
            settings.runners, record.options,
        )  # fmt: skip
        now = manifest_of(planned, manifest_options(manifest), settings.job_files)
        changed = plan_changed(manifest, now, record)
        if changed is not None:
            return replace(found, refused=changed)
        # Read at the base: a PR does not double its own repeats' GPU time.
        if request.scope == "repeat" and load_at(root, "HEAD^1").results.paired_repeats:
            base_jobs = main_jobs(planned, record.options)
    docs, skipped = results_below([request.source_dir / "results"])
    runners = load_runners(root, None, settings.runners).runners
    gpus = node_gpus(runners.labels, runners.hardware) if runners is not None else {}
    if record.pr is not None:  # a PR's runners.yaml may not shrink its own nodes
        gpus = priced_sizes(gpus, node_gpus_at(root, "HEAD^1", settings.runners))
    spent = None
    if record.pr is not None:
        # Sized by the plan the PR's code wrote and the one this checkout makes: the larger.
        rows = [*jobs_of(files.whole), *jobs_of(whole_plan(planned.result.plan.as_json()))]
        held = plan_gpus(rows, gpus, runners.labels if runners is not None else {})
        spent = gh.decide(lambda: lineage_hours(gh, found.run, found.branch, gpus, held))
    files_now = digests_at(root, "HEAD", manifest["measured"]["files"])
    return replace(
        found,
        manifest=manifest,
        recipe_changes=changed_files(root, manifest),
        floors=load_floors(settings.accuracy_floors, root),
        docs=docs,
        skipped=skipped,
        pools=runners.labels if runners is not None else {},
        node_gpus=gpus,
        other_node=settings.rerun_other_node,
        head_sha=git.git(["rev-parse", "HEAD"], root).strip(),
        budgets=load_at(root, "HEAD^1" if record.pr is not None else "HEAD").budget,
        files_now=files_now,
        recorded=_recorded(request.source_dir / JOBS_ARTIFACT / TIMINGS_FILE, request.source_id),
        main_timings=parse_timings(request.durations.read_bytes(), str(request.durations))
        if request.durations is not None and request.durations.is_file()
        else None,
        repeat=repeat_points(read_verdict(request.source_dir))
        if request.scope == "repeat"
        else set(),
        base_jobs=base_jobs,
        lineage_hours=spent,
    )


def lineage_hours(
    gh: GitHub, source: Run, branch: list[Run], gpus: dict[str, int], held: dict[str, int]
) -> float:
    """What a PR's lineage spent, from GitHub's record, not from the records its runs wrote:
    the GPU jobs of the source and of the runs before it on its branch, back to the newest
    sweep that held GPUs (its root), each at the GPUs its plan's jobs hold (`held`)."""
    total = 0.0
    for run in lineage_runs(source, branch):
        jobs = gh.jobs(run.id, every_attempt=True)  # each attempt held its GPUs
        total += gpu_job_hours(jobs, gpus, held)
        if lineage_root(run, jobs, gpus):
            break
    return total


def main_jobs(planned: Planned, options: PlanOptions) -> list[tuple[MatrixRow, bool]]:
    """Main's plan of every config at the base (HEAD^1 of the merge ref), with the sweep's
    options, in the format the PR's plan was read in: the partners of a paired repeat.
    The base's configs are read as data (never run); a base that cannot be planned leaves
    the repeat unpaired."""
    from infx.matrix.plan import build_plan

    read_base = planned.inputs.base
    head = planned.result.head
    if read_base is None or head is None:
        return []
    try:
        base = replace(read_base(), fmt=head.fmt)
        keys = base.masters.keys()
        plan = build_plan([{"config-keys": keys}], base, options) if keys else None
    except InfxError:
        return []
    return jobs_of(whole_plan(plan.as_json())) if plan is not None else []


def _recorded(path: Path, run_id: int) -> Timings | None:
    """The timings a source run's collect recorded (its sweep-jobs artifact), if any."""
    if not path.is_file():
        return None
    return parse_timings(path.read_bytes(), f"run {run_id}'s {JOBS_ARTIFACT}/{TIMINGS_FILE}")


def repeat_facts(
    root: Path, asked: RepeatRequest
) -> tuple[dict[str, Any], RunRecord | None, int, bool]:
    """What `infx sweep repeat` decides from: this run's verdict ({} when its compare
    wrote none), its rerun record (None when its plan left none) and, from the checkout
    it runs in (the default branch), `[results] confirm-repeats` and `paired-repeats`."""
    verdict: dict[str, Any] = {}
    if asked.verdict_file.is_file():
        verdict = read_verdict_file(asked.verdict_file)
    record = None
    if asked.record_file.is_file():
        try:
            data = json.loads(asked.record_file.read_bytes())
        except (UnicodeDecodeError, json.JSONDecodeError):
            raise UsageError(f"{asked.record_file} is not JSON") from None
        record = RunRecord.from_json(data, str(asked.record_file))
    settings = load_settings(root).results
    return verdict, record, settings.confirm_repeats, settings.paired_repeats


def read_pairs(path: Path) -> list[dict[str, Any]]:
    """A paired repeat's pairs.json (`infx.rerun.paired.document`): its entries."""
    try:
        data = json.loads(path.read_bytes())
    except (OSError, UnicodeDecodeError, json.JSONDecodeError):
        raise UsageError(f"{path} is not a pairs document (JSON)") from None
    if not isinstance(data, list) or not all(isinstance(e, dict) for e in data):
        raise UsageError(f"{path} is not a pairs document (a list of pairs)")
    return data
