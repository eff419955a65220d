"""GPU-hours spent only where they buy information, shown with the workflows as GitHub runs
them (GitHub's own expression evaluator, every `run:` step in bash, the fake API): a sweep
of 40 jobs with 3 infra failures is retried automatically with exactly those 3, pinned to
healthy nodes, and its results hold each point once; a rerun after a recipe change runs the
canary first, and a failed canary still stops the rest; an over-budget plan starts no GPU
job until someone approves it."""

from __future__ import annotations

import json
import shutil
import subprocess
from collections import Counter
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from infx.rerun.rules import row_id
from tests.actions.conftest import SweepRepo
from tests.actions.expressions import condition
from tests.actions.gpu import Cluster, point, pr_merge_ref, publish
from tests.actions.harness import (
    Run,
    World,
    comment_payload,
    load,
    plan_rows,
    planned,
    pr_payload,
    simulate,
)
from tests.conftest import entry, make_repo
from tests.github.fake_api import FakeGitHub

AMD = """\
llama-fp8-mi355x-vllm:
  image: vllm/vllm-openai-rocm:v0.11.0
  model: meta-llama/Llama-3.3-70B-Instruct
  model-prefix: llama70b
  runner: mi355x
  precision: fp8
  framework: vllm
  multinode: false
  scenarios:
    fixed-seq-len:
    - isl: 1024
      osl: 1024
      search-space:
      - { tp: 8, conc-start: 1, conc-end: 128 }
      - { tp: 4, conc-start: 1, conc-end: 128 }
    - isl: 8192
      osl: 1024
      search-space:
      - { tp: 8, conc-start: 4, conc-end: 256 }
      - { tp: 4, conc-start: 4, conc-end: 256 }

llama-fp8-mi355x-sglang:
  image: lmsysorg/sglang:v0.5.5-rocm700-mi35x
  model: meta-llama/Llama-3.3-70B-Instruct
  model-prefix: llama70b
  runner: mi355x
  precision: fp8
  framework: sglang
  multinode: false
  scenarios:
    fixed-seq-len:
    - isl: 1024
      osl: 1024
      search-space:
      - { tp: 8, conc-start: 4, conc-end: 128 }
"""
NODES = [f"mi355x-amds_0{i}" for i in range(8)]
RUNNERS = "labels:\n  mi355x:\n" + "".join(f"    - {n}\n" for n in NODES)
POOLS = {"mi355x": NODES}
RECIPE = "recipes/llama70b_fp8_mi355x_vllm.sh"
A_ID, B_ID, RETRY_ID = 9100, 9200, 9300
# Three jobs lost to infra: two with their runner, one on a workspace it cannot clean.
INFRA = {
    ("vllm", 1024, 8, 32, False): ("lost", "mi355x-amds_03"),
    ("vllm", 8192, 4, 64, False): ("shutdown", "mi355x-amds_03"),
    ("sglang", 1024, 8, 8, False): ("workspace", "mi355x-amds_05"),
}


def sweep_repository(path: Path) -> SweepRepo:
    repo = make_repo(path, master=AMD)
    repo.commit("runners and recipe", **{"configs__runners.yaml": RUNNERS, RECIPE: "echo v1\n"})
    base = repo.git("rev-parse", "HEAD")
    repo.git("checkout", "-q", "-b", "feature")
    head = repo.commit(
        "Tune every Llama FP8 config",
        **{"perf-changelog.yaml": repo.read().decode() + "\n" + entry(["llama-fp8-*"])},
    )
    repo.git("checkout", "-q", "-b", "pr-merge", base)
    repo.git("merge", "-q", "--no-ff", "-m", "Merge feature", "feature")
    pr_merge_ref(repo.path)
    return SweepRepo(repo.path, base, head, repo.git("rev-parse", "HEAD"))


@dataclass
class SourceRun:
    """Run A: the PR's sweep of 40 jobs, 3 of them lost to infra, as GitHub keeps it."""

    repo: SweepRepo
    run: Run
    jobs: list[dict[str, Any]]
    logs: dict[int, bytes]

    def publish(self, api: FakeGitHub, world: World) -> None:
        api.state.add_pull(17, head_sha=self.repo.head, commits=[self.repo.head],
                           labels=["full-sweep-enabled"])  # fmt: skip
        publish(api, world, self.run, A_ID, head_sha=self.repo.head, conclusion="failure",
                jobs=self.jobs, logs=self.logs)  # fmt: skip


@pytest.fixture(scope="module")
def source_run(tmp_path_factory: pytest.TempPathFactory) -> SourceRun:
    tmp = tmp_path_factory.mktemp("forty")
    repo = sweep_repository(tmp / "repo")
    with FakeGitHub() as fake:
        fake.state.add_pull(17, head_sha=repo.head, commits=[repo.head])
        fake.state.trusted_labels(17, ["full-sweep-enabled"])
        world = World(repo.path, tmp, fake.url, fake.state.requests)
        cluster = Cluster(fake, A_ID, POOLS, tmp / "gpu", failures=dict(INFRA))
        payload = pr_payload("synchronize", ["full-sweep-enabled"], head_sha=repo.head,
                             base_sha=repo.base)  # fmt: skip
        run = simulate(world, "run-sweep.yml", "pull_request", payload, gpu=cluster, run_id=A_ID)
        return SourceRun(repo, run, fake.state.jobs[A_ID], dict(fake.state.logs))


def world_for(repo: SweepRepo, api: FakeGitHub, tmp_path: Path) -> World:
    return World(repo.path, tmp_path, api.url, api.state.requests)


def results(run: Run) -> list[dict[str, Any]]:
    return json.loads((run.artifacts["results_bmk"] / "results.json").read_text())["rows"]


def points(rows: list[dict[str, Any]]) -> Counter[str]:
    return Counter(json.dumps([r["kind"], r["identity"]], sort_keys=True) for r in rows)


def dispatched(run: Run, api: FakeGitHub) -> dict[str, Any]:
    (dispatch,) = api.state.workflow_dispatches
    inputs = dict(dispatch["inputs"])
    if "pr-number" in inputs:
        inputs["pr-number"] = int(inputs["pr-number"])  # a number input, as GitHub types it
    return {
        "ref": f"refs/heads/{dispatch['ref']}",
        "inputs": inputs,
        "workflow": dispatch["workflow"],
    }


def test_the_source_run_lost_three_of_forty_jobs_to_infra(source_run: SourceRun) -> None:
    run = source_run.run
    assert run.ran("setup"), run.log("setup")
    assert len(plan_rows(planned(run))) == 40
    assert len(run.dispatches) == 40
    assert sorted(point(d.row) for d in run.dispatches if d.result == "failure") == sorted(INFRA)
    assert run.jobs["canary"] == "success" and run.ran("collect"), run.log("collect")
    assert len(points(results(run))) == 37
    triage = run.summaries["collect"]
    assert "| runner-lost | mi355x-amds\\_03 | 2 | yes |" in triage
    assert "| workspace-permission | mi355x-amds\\_05 | 1 | yes |" in triage
    assert "| mi355x | 37 | 40 | 92% |" in triage
    # The next sweep's estimate: every successful job's 20 minutes, by identity.
    timings = json.loads((run.artifacts["sweep-jobs"] / "timings.json").read_text())
    assert len(timings["jobs"]) == 37
    assert {s for samples in timings["jobs"].values() for s, _ in samples} == {1200.0}


def test_three_infra_failures_are_retried_exactly_and_each_point_appears_once(
    source_run: SourceRun, api: FakeGitHub, tmp_path: Path
) -> None:
    world = world_for(source_run.repo, api, tmp_path)
    source_run.publish(api, world)
    completed = {
        "action": "completed",
        "workflow_run": {"id": A_ID, "name": "run-sweep", "conclusion": "failure",
                         "event": "pull_request", "head_branch": "feature",
                         "head_sha": source_run.repo.head},
        "repository": {"full_name": "acme/bench"},
    }  # fmt: skip
    retry = simulate(world, "sweep-retry.yml", "workflow_run", completed)
    assert retry.ran("decide") and retry.ran("act"), retry.logs
    assert retry.writes["decide"] == []  # the job reading the run writes nothing
    event = dispatched(retry, api)
    assert event["workflow"] == "run-sweep.yml" and event["ref"] == "refs/heads/feature"
    assert event["inputs"] == {"rerun-of": str(A_ID), "scope": "infra", "pr-number": 17}

    cluster = Cluster(api, B_ID, POOLS, tmp_path / "gpu")
    rerun = simulate(world, "run-sweep.yml", "workflow_dispatch", event, gpu=cluster, run_id=B_ID)
    assert rerun.ran("setup"), rerun.log("setup")
    assert rerun.jobs["canary"] == "skipped"  # the recipe is unchanged; the canary passed
    # The source sweep's flags, as its compare job needs them (a full sweep: not trimmed).
    assert (rerun.outputs["setup"]["trim-conc"], rerun.outputs["setup"]["fail-fast"]) == (
        "false", "false"
    )  # fmt: skip
    assert sorted(point(d.row) for d in rerun.dispatches) == sorted(INFRA)
    # Each retry on another node of the pool, none on the two that failed, spread out.
    nodes = [d.runner for d in rerun.dispatches]
    assert set(nodes) <= set(NODES) - {"mi355x-amds_03", "mi355x-amds_05"}
    assert len(set(nodes)) == 3
    merged = results(rerun)
    assert len(merged) == 40 and max(points(merged).values()) == 1
    triage = rerun.summaries["collect"]
    assert "| mi355x | 40 | 43 | 93% |" in triage  # every attempt, the source run's too
    # The rerun carries the plan it completes, and says what it is.
    carried = rerun.artifacts["sweep-plan"]
    assert json.loads((carried / "source-plan.json").read_text()) == planned_whole(source_run)
    record = json.loads((carried / "rerun.json").read_text())
    assert (record["source"], record["root"], record["scope"], record["pr"]) == (
        A_ID,
        A_ID,
        "infra",
        17,
    )

    # Retried once: the retry's own failure is not retried automatically.
    api.state.workflow_dispatches.clear()
    publish(api, world, rerun, B_ID, head_sha=source_run.repo.head, conclusion="failure",
            minute=120)  # fmt: skip
    again = simulate(world, "sweep-retry.yml", "workflow_run",
                     {**completed, "workflow_run": {**completed["workflow_run"], "id": B_ID}})  # fmt: skip
    assert again.ran("decide") and again.jobs["act"] == "skipped"
    assert "itself an automatic retry" in again.log("decide")
    assert api.state.workflow_dispatches == []


def _holds(timings: dict[str, Any], recorded: dict[str, Any]) -> bool:
    """Every sample of `recorded` is in `timings`."""
    jobs = timings["jobs"]
    return all(sample in jobs.get(key, []) for key, samples in recorded["jobs"].items()
               for sample in samples)  # fmt: skip


def test_a_pr_s_rerun_is_estimated_from_main_s_timings_never_its_own(
    source_run: SourceRun, api: FakeGitHub, tmp_path: Path
) -> None:
    """Issue 31, case 4: the PR's collect job (its own workflow) claims every job took 61 s.
    Its reruns start from main's recorded timings instead (a push sweep of main recorded
    1200 s), carry those on, and main's next sweep reads main's run alone: the forged
    samples never lower an estimate, however new they are."""
    from tests.github.scenario import zip_files as zip_bytes

    world = world_for(source_run.repo, api, tmp_path)
    source_run.publish(api, world)
    honest = json.loads((source_run.run.artifacts["sweep-jobs"] / "timings.json").read_text())
    forged = {"format": honest["format"],
              "jobs": {key: [[61.0, A_ID]] for key in honest["jobs"]}}  # fmt: skip
    (jobs,) = [a for a in api.state.artifacts[A_ID] if a["name"] == "sweep-jobs"]
    api.state.blobs[jobs["id"]] = zip_bytes({"timings.json": json.dumps(forged).encode()})
    main_run = 8000
    api.state.add_run(main_run, head_sha=source_run.repo.base, minute=-60, event="push",
                      branch="main", artifacts=["sweep-jobs"])  # fmt: skip
    mains = {"format": honest["format"],
             "jobs": {key: [[1200.0, main_run]] for key in honest["jobs"]}}  # fmt: skip
    api.state.blobs[main_run * 100] = zip_bytes({"timings.json": json.dumps(mains).encode()})
    stubborn = {key: ("recipe", "mi355x-amds_01") for key in INFRA}  # still failing each time
    source = A_ID
    for n, run_id in enumerate((B_ID, B_ID + 1)):
        event = {"ref": "refs/heads/feature", "repository": {"full_name": "acme/bench"},
                 "inputs": {"rerun-of": str(source), "scope": "missing", "pr-number": 17}}  # fmt: skip
        cluster = Cluster(api, run_id, POOLS, tmp_path / f"gpu{n}", failures=dict(stubborn))
        rerun = simulate(world, "run-sweep.yml", "workflow_dispatch", event, gpu=cluster,
                         run_id=run_id)  # fmt: skip
        assert rerun.ran("setup"), rerun.log("setup")
        assert len(rerun.dispatches) == 3
        carried = json.loads((rerun.artifacts["sweep-plan"] / "timings.json").read_text())
        assert _holds(carried, mains) and not _holds(carried, forged), f"rerun {n + 1}"
        publish(api, world, rerun, run_id, head_sha=source_run.repo.head, conclusion="failure",
                minute=120 + 60 * n)  # fmt: skip
        source = run_id
    env = {"GITHUB_API_URL": api.url, "GITHUB_TOKEN": "t", "GITHUB_REPOSITORY": "acme/bench"}
    out = tmp_path / "next-sweep-timings.json"
    result = _infx(env, "sweep", "timings", "--out", str(out), cwd=source_run.repo.path)
    assert result.exit_code == 0 and f"from run(s) {main_run} " in result.output, result.output
    assert json.loads(out.read_text()) == mains


def planned_whole(source_run: SourceRun) -> dict[str, Any]:
    from infx.rerun.rules import whole_plan

    return whole_plan(planned(source_run.run))


def _changed_recipe(source_run: SourceRun, tmp_path: Path) -> SweepRepo:
    """A copy of the repository whose PR fixed the recipe since run A."""
    path = tmp_path / "repo"
    shutil.copytree(source_run.repo.path, path)

    def git(*args: str) -> str:
        done = subprocess.run(["git", *args], cwd=path, capture_output=True, text=True, check=True)
        return done.stdout.strip()

    git("checkout", "-q", "feature")
    (path / RECIPE).write_text("echo v2\n")
    git("commit", "-qam", "Fix the recipe")
    # GitHub's merge ref is always a fresh merge of the PR head into the base.
    git("checkout", "-q", "-b", "pr-merge-2", source_run.repo.base)
    git("merge", "-q", "--no-ff", "-m", "Merge feature again", "feature")
    pr_merge_ref(path)
    return SweepRepo(path, source_run.repo.base, source_run.repo.head, git("rev-parse", "HEAD"))


@pytest.mark.parametrize("canary", ["success", "failure"])
def test_after_a_recipe_change_the_canary_runs_first_and_its_failure_stops_the_rest(
    source_run: SourceRun, api: FakeGitHub, tmp_path: Path, canary: str
) -> None:
    repo = _changed_recipe(source_run, tmp_path)
    world = world_for(repo, api, tmp_path)
    source_run.publish(api, world)
    event = {"ref": "refs/heads/feature", "repository": {"full_name": "acme/bench"},
             "inputs": {"rerun-of": str(A_ID), "scope": "missing", "pr-number": 17}}  # fmt: skip
    cluster = Cluster(api, B_ID, POOLS, tmp_path / "gpu")
    if canary == "failure":
        first = planned(source_run.run)["canary"][0]
        cluster.failures[point(first)] = ("recipe", "mi355x-amds_01")
    rerun = simulate(world, "run-sweep.yml", "workflow_dispatch", event, gpu=cluster, run_id=B_ID)
    assert rerun.ran("setup"), rerun.log("setup")
    assert "the recipe changed since" in rerun.log("setup")
    jobs = [d.job.split("[")[0] for d in rerun.dispatches]
    assert jobs[0] == "canary"
    canary_row = planned(source_run.run)["canary"][0]
    assert row_id(rerun.dispatches[0].row) == row_id(canary_row)
    if canary == "failure":
        assert jobs == ["canary"]
        assert all(rerun.jobs[j] == "skipped" for j in ("single", "evals"))
    else:
        assert sorted(point(d.row) for d in rerun.dispatches[1:]) == sorted(INFRA)
        assert len(results(rerun)) == 40 and max(points(results(rerun)).values()) == 1


def checkouts(run: Run) -> set[str | None]:
    """The commit every GPU job checks out (None: the workflow's default, github.sha)."""
    return {
        step["with"].get("ref")
        for dispatch in run.dispatches
        for step in dispatch.steps
        if str(step.get("uses", "")).startswith("actions/checkout@")
    }


def test_a_rerun_benchmarks_exactly_the_commit_it_planned(
    source_run: SourceRun, api: FakeGitHub, tmp_path: Path
) -> None:
    """A workflow_dispatch runs on the branch tip (github.sha); a rerun of a PR's sweep plans
    GitHub's merge of the PR into main as it is now (refs/pull/N/merge), and records that
    commit in its manifest. Its GPU jobs must run those bytes, not the tip's: main's fix
    would be in the record but not in what ran."""
    assert checkouts(source_run.run) == {source_run.repo.merge}  # a PR's sweep, the same way
    repo = _changed_recipe(source_run, tmp_path)
    subprocess.run(["git", "checkout", "-q", "feature"], cwd=repo.path, check=True)
    tip = subprocess.run(["git", "rev-parse", "HEAD"], cwd=repo.path, capture_output=True,
                         text=True, check=True).stdout.strip()  # fmt: skip
    assert tip != repo.merge
    world = world_for(repo, api, tmp_path)
    source_run.publish(api, world)
    event = {"ref": "refs/heads/feature", "repository": {"full_name": "acme/bench"},
             "inputs": {"rerun-of": str(A_ID), "scope": "missing", "pr-number": 17}}  # fmt: skip
    cluster = Cluster(api, B_ID, POOLS, tmp_path / "gpu")
    rerun = simulate(world, "run-sweep.yml", "workflow_dispatch", event, gpu=cluster, run_id=B_ID)
    assert rerun.ran("setup"), rerun.log("setup")
    record = json.loads((rerun.artifacts["sweep-plan"] / "rerun.json").read_text())
    assert record["sha"] == repo.merge == rerun.outputs["setup"]["sha"]
    assert len(rerun.dispatches) == 4 and checkouts(rerun) == {repo.merge}
    # The chunk jobs that read the plan install infx from the same commit.
    assert all(rerun.ran(job) for job in rerun.jobs if job.endswith("/rows"))


# --- the budget ----------------------------------------------------------------------------


def _budgeted(tmp_path: Path, budget: float) -> SweepRepo:
    repo = make_repo(tmp_path / "budget")
    repo.commit("budget", **{"infx.toml": f"[budget]\nfull-sweep-enabled = {budget}\n"})
    base = repo.git("rev-parse", "HEAD")
    repo.git("checkout", "-q", "-b", "feature")
    # The PR raises its own budget: the gate reads the base's.
    head = repo.commit(
        "Tune every Llama FP8 config",
        **{
            "perf-changelog.yaml": repo.read().decode() + "\n" + entry(["llama-fp8-*"]),
            "infx.toml": "[budget]\nfull-sweep-enabled = 1000000\n",
        },
    )
    repo.git("checkout", "-q", "-b", "pr-merge", base)
    repo.git("merge", "-q", "--no-ff", "-m", "Merge feature", "feature")
    return SweepRepo(repo.path, base, head, repo.git("rev-parse", "HEAD"))


GPU_JOBS = ["canary", "single", "agentic", "multi", "multi-agentic", "evals", "agentic-evals",
            "multinode-evals", "multinode-agentic-evals"]  # fmt: skip


@pytest.mark.parametrize(
    ("budget", "approval", "starts"),
    [
        (10, None, False),  # 22 GPU-hours held, over 10: waits
        (10, False, False),  # a reviewer rejects: nothing ever starts
        (10, True, True),  # approved: the sweep runs
        (100, None, True),  # within budget: no wait at all
    ],
)
def test_an_over_budget_plan_starts_no_gpu_job_until_approved(
    api: FakeGitHub, tmp_path: Path, budget: float, approval: bool | None, starts: bool
) -> None:
    repo = _budgeted(tmp_path, budget)
    api.state.add_pull(17, head_sha=repo.head, commits=[repo.head])
    api.state.label(17, "labeled", "full-sweep-enabled", 1)  # by a maintainer
    api.state.permissions["maintainer"] = "write"
    api.state.environment("gpu-budget", ["lead"])  # protected, as docs/security.md says
    if approval:
        api.state.approve(4242, "lead", "gpu-budget")
    world = world_for(repo, api, tmp_path)
    payload = pr_payload("synchronize", ["full-sweep-enabled"], head_sha=repo.head,
                         base_sha=repo.base)  # fmt: skip
    run = simulate(world, "run-sweep.yml", "pull_request", payload,
                   approvals={"gpu-budget": approval})  # fmt: skip
    assert run.ran("setup"), run.log("setup")
    # The tp4 points use half of their 8-GPU nodes: 15 GPU-hours used, 22 held.
    over = budget < 22
    assert run.outputs["setup"]["over-budget"] == str(over).lower()
    assert bool(run.dispatches) is starts
    if starts:
        assert len(run.dispatches) == len(plan_rows(planned(run)))
    expected = {None: "waiting", False: "failure", True: "success"}[approval] if over else "skipped"
    assert run.jobs["budget-approval"] == expected
    if approval is None and over:
        assert {run.jobs[j] for j in GPU_JOBS} == {"waiting"}
    ours = [s for s in api.state.statuses.get(repo.head, []) if s["context"] == "infx/gpu-budget"]
    status = ours[-1]  # the first one set (GitHub lists newest first)
    used = "(whole nodes; servers use 15.0)"
    if over:
        assert status["state"] == "pending"
        assert status["description"] == (
            f"waiting for approval in gpu-budget: over budget: 22.0 of {budget:.1f} GPU-hours "
            f"for label full-sweep-enabled {used}"
        )
    else:
        assert (status["state"], status["description"]) == (
            "success",
            f"within budget: 22.0 of {budget:.1f} GPU-hours for label full-sweep-enabled {used}",
        )  # fmt: skip
    if approval and over:
        assert ours[0]["state"] == "success"
        assert ours[0]["description"].startswith("approved by lead in gpu-budget: over budget")


@pytest.mark.parametrize(
    ("who", "permission", "why"),
    [
        ("triager", "read", "added by triager, who lacks write permission"),  # triage reads as read
        ("maintainer", "write", None),
        (None, None, "no one is known to have added it"),  # the timeline says nothing
        ("sender:triager", "read", "added by triager, who lacks write permission"),
        ("sender:maintainer", "write", None),  # this labeled event's sender; timeline lags
    ],
)
def test_a_budgeted_label_added_without_write_permission_waits_for_approval(
    api: FakeGitHub, tmp_path: Path, who: str | None, permission: str | None, why: str | None
) -> None:
    """The label's budget is the repository's trust in whoever may add that label: one added
    by someone who may not push (the triage role may label) or by no one known holds every
    GPU job for a reviewer, however small the plan."""
    repo = _budgeted(tmp_path, 100)
    api.state.add_pull(17, head_sha=repo.head, commits=[repo.head])
    payload = pr_payload("labeled", ["full-sweep-enabled"], "full-sweep-enabled",
                         head_sha=repo.head, base_sha=repo.base, sender=None)  # fmt: skip
    if who is not None and who.startswith("sender:"):
        who = who.removeprefix("sender:")
        payload["sender"] = {"login": who}
        api.state.permissions[who] = permission
    elif who is not None:
        api.state.label(17, "labeled", "full-sweep-enabled", 1)
        api.state.timeline[17][-1]["actor"] = api.state.user(who)
        api.state.permissions[who] = permission
    world = world_for(repo, api, tmp_path)
    run = simulate(world, "run-sweep.yml", "pull_request", payload)
    assert run.ran("setup"), run.log("setup")
    assert run.outputs["setup"]["over-budget"] == str(why is not None).lower()
    if why is None:
        assert len(run.dispatches) == len(plan_rows(planned(run)))
        return
    assert run.dispatches == [] and run.jobs["budget-approval"] == "waiting"
    assert why in run.log("setup")
    ours = [s for s in api.state.statuses.get(repo.head, []) if s["context"] == "infx/gpu-budget"]
    assert ours[0]["state"] == "pending" and "approval" in ours[0]["description"]


@pytest.mark.parametrize("over_budget", ["", "maybe", "TRUE"])
def test_a_missing_or_unexpected_verdict_starts_no_gpu_job(over_budget: str) -> None:
    """Bad luck: if setup's verdict is missing or malformed, no GPU job may start."""
    jobs = load("run-sweep.yml")["jobs"]
    outputs = {"has-canary": "true", "has-single": "true", "over-budget": over_budget}
    ctx = {
        "needs": {
            "setup": {"result": "success", "outputs": outputs},
            "canary": {"result": "skipped", "outputs": {}},
            "budget-approval": {"result": "skipped", "outputs": {}},
        }
    }
    approval = condition(jobs["budget-approval"]["if"], ctx)
    assert approval is (over_budget.lower() == "true")  # GitHub compares strings case-blind
    for name in ("canary", "single"):
        assert condition(jobs[name]["if"], ctx) is False


def test_every_gpu_job_waits_for_the_budget_approval() -> None:
    jobs = load("run-sweep.yml")["jobs"]
    for name in GPU_JOBS:
        assert "budget-approval" in jobs[name]["needs"], name
        assert "needs.budget-approval.result == 'success'" in jobs[name]["if"], name
    assert jobs["budget-approval"]["environment"] == "gpu-budget"


# --- /rerun-failed -----------------------------------------------------------------------------


def _comment(api: FakeGitHub, login: str, body: str) -> dict[str, Any]:
    return api.state.add_comment(17, login, body, 300, "MEMBER")


@pytest.mark.parametrize(
    ("login", "body", "reaction", "dispatches"),
    [
        ("maintainer", "/rerun-failed", "+1", True),
        ("maintainer", f"/rerun-failed {A_ID}", "+1", True),
        ("reader", "/rerun-failed", "-1", False),  # a member without write permission
        ("maintainer", "/rerun-failed please", "-1", False),  # not exactly the command
        ("maintainer", "/rerun-failed 12345", "-1", False),  # no such run
    ],
)
def test_rerun_failed_comment(
    source_run: SourceRun, api: FakeGitHub, tmp_path: Path, login, body, reaction, dispatches
) -> None:
    world = world_for(source_run.repo, api, tmp_path)
    source_run.publish(api, world)
    api.state.permissions["maintainer"] = "write"
    comment = _comment(api, login, body)
    run = simulate(world, "rerun-failed.yml", "issue_comment", comment_payload(comment, number=17))
    assert run.ran("decide") and run.ran("act"), run.logs
    assert run.writes["decide"] == []
    assert [r["content"] for r in api.state.reactions[comment["id"]]] == [reaction]
    if dispatches:
        event = dispatched(run, api)
        assert event["inputs"] == {"rerun-of": str(A_ID), "scope": "missing", "pr-number": 17}
        assert "Rerunning 3 of 40 jobs" in run.summaries["decide"]
    else:
        assert api.state.workflow_dispatches == []


# --- the commands, as a maintainer and as an attacker would call them -------------------------


def _infx(env: dict[str, str], *args: str, cwd: Path | None = None):
    from click.testing import CliRunner

    from infx.cli import cli

    old = Path.cwd()
    if cwd is not None:
        import os

        os.chdir(cwd)
    try:
        return CliRunner().invoke(cli, list(args), env=env, catch_exceptions=False)
    finally:
        if cwd is not None:
            import os

            os.chdir(old)


@pytest.fixture
def published(source_run: SourceRun, api: FakeGitHub, tmp_path: Path) -> dict[str, str]:
    world = world_for(source_run.repo, api, tmp_path)
    source_run.publish(api, world)
    return {"GITHUB_API_URL": api.url, "GITHUB_TOKEN": "t", "GITHUB_REPOSITORY": "acme/bench"}


def test_rerun_command_previews_then_dispatches_the_targeted_rerun(
    published: dict[str, str], api: FakeGitHub
) -> None:
    dry = _infx(published, "sweep", "rerun", str(A_ID), "--dry-run")
    assert dry.exit_code == 0, dry.output
    # Run A recorded no durations before it ran: 15 minutes a point, on 8, 4 and 8 GPUs,
    # each job holding a whole 8-GPU node.
    assert (
        "Rerunning 3 of 40 jobs: about 6.0 GPU-hours held, 5.0 used by the servers "
        "(a full rerun: 80.0)." in dry.output
    )
    assert "| llama70b\\_1k1k | 32 | mi355x | runner-lost on mi355x-amds\\_03 |" in dry.output
    assert "nothing dispatched" in dry.output and api.state.workflow_dispatches == []
    done = _infx(published, "sweep", "rerun", str(A_ID))
    assert done.exit_code == 0, done.output
    assert api.state.workflow_dispatches == [
        {"workflow": "run-sweep.yml", "ref": "feature",
         "inputs": {"rerun-of": str(A_ID), "scope": "missing", "pr-number": "17"}}
    ]  # fmt: skip


@pytest.mark.parametrize(
    ("change", "message"),
    [
        ({"status": "in_progress", "conclusion": None}, "wait until it completes"),
        ({"path": ".github/workflows/ci.yml"}, "is not a run of run-sweep.yml"),
    ],
)
def test_rerun_command_refuses_runs_it_must_not_rerun(
    published: dict[str, str], api: FakeGitHub, change: dict, message: str
) -> None:
    api.state.runs[-1].update(change)
    result = _infx(published, "sweep", "rerun", str(A_ID))
    assert result.exit_code == 1 and message in result.stderr
    assert api.state.workflow_dispatches == []


def test_a_newer_sweep_or_a_running_one_blocks_the_rerun(
    published: dict[str, str], api: FakeGitHub
) -> None:
    api.state.add_run(A_ID + 1, head_sha="c" * 40, minute=200, artifacts=["sweep-plan"])
    newer = _infx(published, "sweep", "rerun", str(A_ID))
    assert newer.exit_code == 1 and f"run {A_ID + 1} is a newer sweep" in newer.stderr
    api.state.runs[-1].update({"status": "queued", "conclusion": None})
    api.state.artifacts[A_ID + 1] = []
    running = _infx(published, "sweep", "rerun", str(A_ID))
    assert running.exit_code == 1 and "is queued on this branch" in running.stderr
    assert api.state.workflow_dispatches == []


def test_an_api_failure_dispatches_nothing(published: dict[str, str], api: FakeGitHub) -> None:
    from tests.github.fake_api import Fault

    api.state.faults.append(Fault(r"/jobs", 502, times=100))
    result = _infx(published, "sweep", "rerun", str(A_ID))
    assert result.exit_code == 2 and "listing jobs of run" in result.stderr
    assert "Traceback" not in result.output and api.state.workflow_dispatches == []


GOOD = {"workflow": "run-sweep.yml", "ref": "feature",
        "inputs": {"rerun-of": str(A_ID), "scope": "missing", "pr-number": "17"}}  # fmt: skip


@pytest.mark.parametrize(
    ("forged", "message"),
    [
        ({**GOOD, "workflow": "deploy.yml"}, "starts 'deploy.yml'"),
        ({**GOOD, "ref": "main"}, f"run {A_ID} is not a run-sweep.yml run on main"),
        ({**GOOD, "ref": "feature; rm -rf /"}, "not a branch name"),
        ({**GOOD, "inputs": {**GOOD["inputs"], "runner": "prod"}}, "inputs must be"),
        ({**GOOD, "inputs": {**GOOD["inputs"], "rerun-of": "1 2"}}, "must be a run id"),
        ({**GOOD, "inputs": {**GOOD["inputs"], "scope": "all"}}, "scope must be"),
        ({**GOOD, "extra": 1}, "must be {workflow, ref, inputs}"),
    ],
)
def test_the_acting_job_refuses_a_forged_decision(
    published: dict[str, str], api: FakeGitHub, tmp_path: Path, forged: dict, message: str
) -> None:
    event = tmp_path / "event.json"
    event.write_text(json.dumps({"action": "completed", "workflow_run": {"id": A_ID}}))
    env = {**published, "GITHUB_EVENT_NAME": "workflow_run", "GITHUB_EVENT_PATH": str(event),
           "DISPATCH": json.dumps(forged)}  # fmt: skip
    result = _infx(env, "sweep", "dispatch-rerun")
    assert result.exit_code == 2 and message in result.stderr, result.output
    assert api.state.workflow_dispatches == []
    good = _infx({**env, "DISPATCH": json.dumps(GOOD)}, "sweep", "dispatch-rerun")
    assert good.exit_code == 0 and len(api.state.workflow_dispatches) == 1


def test_a_comment_cannot_rerun_another_prs_sweep(
    published: dict[str, str], api: FakeGitHub, tmp_path: Path
) -> None:
    """Pinning PR 17's run from PR 18 is refused by the decision, and a forged decision
    that dispatches it for PR 18 is refused by the acting job."""
    api.state.add_pull(18, head_sha="d" * 40, head_ref="other")
    api.state.permissions["maintainer"] = "write"
    comment = api.state.add_comment(18, "maintainer", f"/rerun-failed {A_ID}", 300)
    event = tmp_path / "event.json"
    event.write_text(json.dumps(comment_payload(comment, number=18)))
    env = {**published, "GITHUB_EVENT_NAME": "issue_comment", "GITHUB_EVENT_PATH": str(event)}
    decided = _infx(env, "rerun-failed", "--decide-only")
    assert decided.exit_code == 0 and f"run {A_ID} is not a sweep of PR #18" in decided.output
    forged = _infx({**env, "DISPATCH": json.dumps(GOOD), "REACTION": "+1"}, "sweep",
                   "dispatch-rerun")  # fmt: skip
    assert forged.exit_code == 2 and "not for PR #18" in forged.stderr
    assert api.state.workflow_dispatches == [] and comment["id"] not in api.state.reactions


def test_a_dispatch_on_the_wrong_branch_starts_no_gpu_job(
    source_run: SourceRun, api: FakeGitHub, tmp_path: Path
) -> None:
    """Someone dispatches run-sweep.yml by hand from the Actions page with a run of another
    branch, or of another PR: the rerun's own planning job refuses."""
    world = world_for(source_run.repo, api, tmp_path)
    source_run.publish(api, world)
    for ref, pr, message in [
        ("refs/heads/main", 17, "ran on feature; dispatch its rerun there, not on main"),
        ("refs/heads/feature", 18, "swept PR #17, not PR #18"),
    ]:
        event = {"ref": ref, "repository": {"full_name": "acme/bench"},
                 "inputs": {"rerun-of": str(A_ID), "scope": "missing", "pr-number": pr}}  # fmt: skip
        if pr == 18:
            subprocess.run(["git", "update-ref", "refs/pull/18/merge", source_run.repo.merge],
                           cwd=source_run.repo.path, check=True)  # fmt: skip
        run = simulate(world, "run-sweep.yml", "workflow_dispatch", event, run_id=B_ID)
        assert run.jobs["setup"] == "failure" and message in run.log("setup")
        assert run.dispatches == []


@pytest.mark.parametrize(
    "elsewhere",
    [
        {"path": ".github/workflows/other.yml", "event": "push", "branch": "main"},
        # A fork's run executes the fork's own workflow and can upload a sweep-jobs
        # artifact saying every identity takes a minute: the next estimate would pass any
        # budget.
        {"head_repo": "mallory/bench", "event": "push", "branch": "main"},
        # So can a same-repository pull request's collect job (issue 31, case 4), and a
        # branch's dispatched rerun: both run their branch's workflow files.
        {"event": "pull_request", "branch": "feature"},
        {"event": "workflow_dispatch", "branch": "feature"},
    ],
    ids=["another workflow", "a fork's run", "a pull request's run", "a branch's rerun"],
)
def test_timings_come_from_main_s_own_sweep_runs_only(
    api: FakeGitHub, tmp_path: Path, elsewhere: dict[str, str]
) -> None:
    from tests.github.scenario import zip_files as zip_bytes

    timings = {"format": "infx-job-timings/1", "jobs": {"a" * 20: [[900.0, 1]]}}
    forged = {"format": "infx-job-timings/1", "jobs": {"a" * 20: [[61.0, 3]]}}
    api.state.add_run(1, head_sha="1" * 40, minute=0, artifacts=["sweep-jobs"], event="push",
                      branch="main")  # fmt: skip
    api.state.add_run(3, head_sha="3" * 40, minute=10, artifacts=["sweep-jobs"], **elsewhere)
    api.state.blobs[100] = zip_bytes({"timings.json": json.dumps(timings).encode()})
    api.state.blobs[300] = zip_bytes({"timings.json": json.dumps(forged).encode()})
    env = {"GITHUB_API_URL": api.url, "GITHUB_TOKEN": "t", "GITHUB_REPOSITORY": "acme/bench"}
    out = tmp_path / "t.json"
    result = _infx(env, "sweep", "timings", "--out", str(out))
    assert result.exit_code == 0, result.output
    assert json.loads(out.read_text())["jobs"] == {"a" * 20: [[900.0, 1]]}
    assert "from run(s) 1" in result.output


def test_status_refuses_what_is_not_an_estimate(api: FakeGitHub, tmp_path: Path) -> None:
    env = {"GITHUB_API_URL": api.url, "GITHUB_TOKEN": "t", "GITHUB_REPOSITORY": "acme/bench"}
    bad = tmp_path / "estimate.json"
    for text in ("{", '{"over-budget": false}'):
        bad.write_text(text)
        result = _infx(env, "sweep", "status", "--estimate", str(bad), "--sha", "a" * 40)
        assert result.exit_code == 2 and "is not an estimate" in result.stderr
    assert api.state.statuses == {}
