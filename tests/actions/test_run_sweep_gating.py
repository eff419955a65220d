"""The gating of run-sweep.yml, computed from the workflow file for every combination of
event, action, labels, draft and fork, against what a maintainer expects. Every step that
runs does so for real: the reuse gate against the fake API, `sweep mode` on the event, the
plan step's flag assembly and `sweep plan` on a real repository."""

from __future__ import annotations

import functools
import itertools
import json
import re
import subprocess
from collections import Counter
from pathlib import Path
from typing import Any

import pytest

from infx.errors import InfxError
from infx.sweep.labels import PRIMARY as PRIMARY_SHAPES
from infx.sweep.labels import decide, decide_event
from tests.actions.conftest import SweepRepo
from tests.actions.expressions import Status, condition, render
from tests.actions.harness import (
    INFX,
    WORKFLOWS,
    Run,
    World,
    key,
    load,
    plan_rows,
    planned,
    pr_payload,
    push_payload,
    simulate,
    triggered,
)
from tests.conftest import entry, make_repo
from tests.github.fake_api import FakeGitHub, Fault
from tests.github.scenario import RUN, green_pr
from tests.matrix.conftest import AMD as MATRIX_AMD
from tests.matrix.conftest import RUNNERS as MATRIX_RUNNERS

WORKFLOW = load("run-sweep.yml")
BENCH_JOBS = [
    name
    for name, job in WORKFLOW["jobs"].items()
    if "benchmark-tmpl.yml" in str(job.get("uses", ""))
]
PRIMARY = {label: shape.canary for label, shape in PRIMARY_SHAPES.items()}
MODIFIERS = ["all-evals", "evals-only", "agentx-fast", "skip_queue"]
LABEL_SETS = [
    [],
    ["sweep-enabled"],
    ["full-sweep-fail-fast"],
    ["full-sweep-enabled", "evals-only"],
    ["non-canary-full-sweep-enabled", "all-evals"],
    ["sweep-enabled", "full-sweep-enabled"],
    ["documentation"],
]
ACTIONS = [
    "opened",
    "reopened",
    "synchronize",
    "ready_for_review",
    "labeled",
    "unlabeled",
    "closed",
]


def expected(action: str, labels: list[str], event_label: str | None, draft: bool, fork: bool):
    """What should reach the GPU runners: None (not triggered), 'error', or (canary, sweep)."""
    if action not in ("ready_for_review", "synchronize", "labeled", "unlabeled"):
        return None
    if draft or fork:
        return (False, False)
    if action in ("labeled", "unlabeled") and event_label not in [*PRIMARY, *MODIFIERS]:
        return (False, False)
    primaries = [label for label in labels if label in PRIMARY]
    if len(primaries) > 1:
        return "error"
    if not primaries:
        return (False, False)
    canary = PRIMARY[primaries[0]] and "evals-only" not in labels
    return (canary, True)


def cases():
    for action, labels, draft, fork in itertools.product(
        ACTIONS, LABEL_SETS, [False, True], [False, True]
    ):
        if action == "labeled":
            for event_label in sorted({*labels, "documentation"}):
                yield action, sorted({*labels, event_label}), event_label, draft, fork
        elif action == "unlabeled":
            for event_label in ("sweep-enabled", "documentation"):
                yield action, [x for x in labels if x != event_label], event_label, draft, fork
        else:
            yield action, labels, None, draft, fork


CASES = list(cases())


def gpu(run: Run, job: str | None = None) -> list[dict[str, Any]]:
    return [d.row for d in run.dispatches if job is None or d.job.startswith(f"{job}[")]


FLAGS = {
    "sweep-enabled": "--trim-conc",
    "all-evals": "--all-evals",
    "evals-only": "--evals-only",
}


def flags_for(labels: list[str]) -> tuple[str, ...]:
    return tuple(sorted(FLAGS[label] for label in labels if label in FLAGS))


@functools.cache
def _direct_plan(path: str, base: str, head: str, flags: tuple[str, ...]) -> str:
    return subprocess.run(
        [str(INFX), "sweep", "plan", "--base", base, "--head", head, *flags],
        cwd=path,
        capture_output=True,
        text=True,
        check=True,
    ).stdout


def direct_plan(sweep: SweepRepo, flags: tuple[str, ...]) -> Counter[str]:
    """The rows `infx sweep plan` gives when called by hand with exactly these flags."""
    plan = json.loads(_direct_plan(str(sweep.path), sweep.base, sweep.merge, flags))
    return Counter(map(key, plan_rows(plan)))


def pr(sweep: SweepRepo, *args: Any, **kwargs: Any) -> dict[str, Any]:
    return pr_payload(*args, head_sha=sweep.head, base_sha=sweep.base, **kwargs)


def push(sweep: SweepRepo) -> dict[str, Any]:
    return push_payload(before=sweep.base, after=sweep.merge)


@pytest.mark.parametrize(
    ("action", "labels", "event_label", "draft", "fork"),
    CASES,
    ids=[
        f"{a}-{'+'.join(lb) or 'none'}-{e}-{'draft' if d else 'ready'}-{'fork' if f else 'same'}"
        for a, lb, e, d, f in CASES
    ],
)
def test_pull_request_gating(
    world: World, sweep_repo: SweepRepo, action, labels, event_label, draft, fork
) -> None:
    payload = pr(sweep_repo, action, labels, event_label, draft, fork)
    want = expected(action, labels, event_label, draft, fork)
    fires = triggered(WORKFLOW, "pull_request", payload, ["perf-changelog.yaml"])
    if want is None:
        assert not fires
        return
    assert fires
    run = simulate(world, "run-sweep.yml", "pull_request", payload)
    gate_runs = action == "synchronize" and not draft and not fork
    assert run.jobs["reuse-gate"] == ("success" if gate_runs else "skipped")
    if want == "error":
        assert run.jobs["setup"] == "skipped"
        assert run.jobs["labels"] == "failure"
        assert "more than one sweep label" in run.log("labels")
        assert run.dispatches == []
        return
    assert run.jobs["labels"] == "skipped"
    canary, sweep = want
    assert run.ran("canary") == canary
    if not sweep:
        assert run.dispatches == []
        return
    plan = planned(run)
    assert Counter(map(key, plan_rows(plan))) == direct_plan(sweep_repo, flags_for(labels))
    assert Counter(map(key, gpu(run))) == Counter(map(key, plan_rows(plan)))
    assert [key(r) for r in gpu(run, "canary")] == [key(r) for r in plan.get("canary", [])]


def test_push_to_main_runs_canary_then_sweep(world: World, sweep_repo: SweepRepo) -> None:
    payload = push(sweep_repo)
    assert triggered(WORKFLOW, "push", payload, ["perf-changelog.yaml"])
    assert not triggered(WORKFLOW, "push", payload, ["README.md"])
    run = simulate(world, "run-sweep.yml", "push", payload)
    assert run.outputs["reuse-gate"]["reuse-enabled"] == "false"
    assert "belongs to no PR" in run.outputs["reuse-gate"]["reuse-reason"]
    (canary,) = gpu(run, "canary")
    single = gpu(run, "single")
    assert canary["conc"] == min(r["conc"] for r in [canary, *single] if not r["run-eval"])
    assert canary not in single and len(single) == 8
    assert run.ran("evals") and run.ran("collect")
    metadata = json.loads(run.outputs["setup"]["changelog-metadata"])
    assert metadata["base_ref"] == sweep_repo.base and "llama-fp8-*" in str(metadata["entries"])


@pytest.mark.parametrize(
    ("canary", "sweep_runs"), [("success", True), ("failure", False), ("cancelled", False)]
)
def test_a_failed_canary_blocks_the_sweep(
    world: World, sweep_repo: SweepRepo, canary: str, sweep_runs: bool
) -> None:
    payload = pr(sweep_repo, "synchronize", ["full-sweep-enabled"])
    run = simulate(world, "run-sweep.yml", "pull_request", payload, outcome={"canary": canary})
    assert run.jobs["canary"] == canary
    assert run.ran("single") is sweep_runs
    assert run.ran("evals") is sweep_runs


def test_failed_reuse_gate_runs_canary_and_sweep(world: World, sweep_repo: SweepRepo, api) -> None:
    """A job's implicit success() looks at every job up its `needs` chain: a canary gated
    on `needs.setup.outputs.has-canary` alone was skipped whenever the reuse gate failed or
    was skipped (the skipped cases are among test_pull_request_gating's)."""
    api.state.faults.append(Fault("/pulls", 404, times=100))
    run = simulate(world, "run-sweep.yml", "push", push(sweep_repo))
    assert run.jobs["reuse-gate"] == "failure" and not run.ran("republish")
    assert run.ran("setup") and run.ran("canary") and run.ran("single")
    assert len(gpu(run, "canary")) == 1


def test_a_cancelled_run_starts_no_more_gpu_jobs(world: World, sweep_repo: SweepRepo) -> None:
    run = simulate(world, "run-sweep.yml", "push", push(sweep_repo), cancel_after="canary")
    assert run.ran("canary")
    assert {job: run.jobs[job] for job in BENCH_JOBS if job != "canary"} == {
        job: "skipped" for job in BENCH_JOBS if job != "canary"
    }
    assert [d.job.split("[")[0] for d in run.dispatches] == ["canary"]


def test_no_canary_label_runs_the_sweep_without_one(world: World, sweep_repo: SweepRepo) -> None:
    payload = pr(sweep_repo, "synchronize", ["non-canary-full-sweep-enabled"])
    run = simulate(world, "run-sweep.yml", "pull_request", payload)
    assert run.jobs["canary"] == "skipped" and run.ran("single")
    assert sorted(r["conc"] for r in gpu(run, "single")) == [4, 4, 8, 8, 16, 16, 32, 32, 64]


@pytest.fixture
def agentic_world(tmp_path: Path, api: FakeGitHub) -> tuple[World, SweepRepo]:
    """A PR selecting every config of a repository with fixed-seq-len and agentic configs."""
    repo = make_repo(tmp_path / "agentic", history="", master=MATRIX_AMD)
    repo.commit("runners", **{"configs__runners.yaml": MATRIX_RUNNERS})
    base = repo.git("rev-parse", "HEAD")
    repo.git("checkout", "-q", "-b", "feature")
    head = repo.commit("every config", **{"perf-changelog.yaml": entry(['"*"'])})
    repo.git("checkout", "-q", "-b", "pr-merge", base)
    repo.git("merge", "-q", "--no-ff", "-m", "Merge feature", "feature")
    sweep = SweepRepo(repo.path, base, head, repo.git("rev-parse", "HEAD"))
    api.state.add_pull(17, head_sha=head, labels=[], commits=[head])
    api.state.trusted_labels(17, ["non-canary-full-sweep-enabled", "agentx-fast"])
    (tmp_path / "world").mkdir()
    return World(repo.path, tmp_path / "world", api.url, api.state.requests), sweep


def test_agentx_fast_keeps_every_row_and_speeds_up_agentic_jobs(
    agentic_world: tuple[World, SweepRepo],
) -> None:
    world, sweep = agentic_world
    labels = ["non-canary-full-sweep-enabled", "agentx-fast"]
    run = simulate(world, "run-sweep.yml", "pull_request", pr(sweep, "synchronize", labels))
    assert run.ran("setup"), run.log("setup")
    assert Counter(map(key, plan_rows(planned(run)))) == direct_plan(sweep, ())
    fast = {
        (d.job.split("[")[0], s["env"]["AGENTX_FAST"])
        for d in run.dispatches
        for s in d.steps
        if "AGENTX_FAST" in s.get("env", {})
    }
    assert ("agentic", "1") in fast and ("single", "") in fast
    assert ("single", "1") not in fast and ("agentic", "") not in fast


def group(payload: dict) -> str:
    ctx = {
        "github": {
            "event_name": "pull_request",
            "event": payload,
            "sha": "f" * 40,
            "run_id": 99,
        },
        "inputs": {},
    }
    return render(WORKFLOW["concurrency"]["group"], ctx)


def test_a_rerun_of_a_pr_shares_the_prs_group_and_cancels_no_sweep() -> None:
    """A PR's rerun waits in the PR's group, so the PR's next push cancels it (its GPU jobs
    and its compare) instead of leaving it running on an old head; a rerun of main's run has
    the group of its source run."""
    ctx = {
        "github": {"event_name": "workflow_dispatch", "event": {}, "sha": "f" * 40, "run_id": 99},
        "inputs": {"rerun-of": "9100", "scope": "missing", "pr-number": 17},
    }
    assert render(WORKFLOW["concurrency"]["group"], ctx) == "run-sweep-17"
    assert group(pr_payload("synchronize", ["full-sweep-enabled"])) == "run-sweep-17"
    assert render(WORKFLOW["concurrency"]["cancel-in-progress"], ctx) is False
    ctx["inputs"] = {"rerun-of": "9100", "scope": "missing", "pr-number": ""}
    assert render(WORKFLOW["concurrency"]["group"], ctx) == "run-sweep-rerun-9100"


def test_label_and_ready_events_get_groups_of_their_own() -> None:
    """A label toggle (which the triage role can make) or ready_for_review cancels nothing
    through its group; job `supersede` cancels older sweeps for a sender who may push."""
    base = group(pr_payload("synchronize", ["full-sweep-enabled"]))
    assert base == "run-sweep-17"
    for payload in (
        pr_payload("labeled", ["full-sweep-enabled"], "full-sweep-enabled"),
        pr_payload("unlabeled", [], "sweep-enabled"),
        pr_payload("labeled", ["documentation"], "documentation"),
        pr_payload("ready_for_review", ["sweep-enabled"]),
    ):
        assert group(payload) == f"run-sweep-17-{payload['action']}-99"
    assert render(WORKFLOW["concurrency"]["cancel-in-progress"], {
        "github": {"event_name": "pull_request"}, "inputs": {}}) is True  # fmt: skip


SUBSETS = [
    list(labels)
    for n in range(len(PRIMARY) + 1)
    for labels in itertools.combinations(sorted(PRIMARY), n)
]


@pytest.mark.parametrize("labels", SUBSETS, ids=["+".join(s) or "none" for s in SUBSETS])
def test_two_primary_labels_never_reach_setup(labels: list[str]) -> None:
    """Defence in depth: setup's own `if:` refuses what `infx sweep mode` refuses, and the
    `labels` job (which prints infx's message) runs exactly then."""
    payload = pr_payload("synchronize", labels)
    ctx = {
        "github": {"event_name": "pull_request", "event": payload, "repository": "acme/bench"},
        "needs": {"reuse-gate": {"result": "success", "outputs": {}}},
    }
    jobs = WORKFLOW["jobs"]
    try:
        decide("pull_request", "synchronize", labels)
        refused = False
    except InfxError as exc:
        refused = exc.exit_code == 1
    assert refused is (len(labels) > 1)
    assert condition(jobs["setup"]["if"], ctx) is not refused
    assert condition(jobs["labels"]["if"], ctx) is refused


def test_every_gpu_job_depends_on_setup_and_passes_no_secrets() -> None:
    for name in BENCH_JOBS:
        job = WORKFLOW["jobs"][name]
        needs = job["needs"] if isinstance(job["needs"], list) else [job["needs"]]
        assert "setup" in needs, name
        assert "secrets" not in job, name
    assert "secrets" not in str(load("benchmark-tmpl.yml"))


@pytest.mark.parametrize(
    "name", ["run-sweep.yml", "benchmark-tmpl.yml", "changelog-gate.yml", "ci.yml"]
)
def test_workflows_pin_actions_and_limit_permissions(name: str) -> None:
    workflow = load(name)
    assert workflow["permissions"] == {"contents": "read"}
    text = (WORKFLOWS / name).read_text()
    for uses in re.findall(r"(?m)^\s*(?:-\s*)?uses:\s*(\S+)", text):
        if uses == "./":
            continue
        if uses.startswith("$/"):
            assert (WORKFLOWS.parents[1] / uses[2:]).is_file(), uses
            continue
        # owner/repo or owner/repo/path (actions/cache/restore), pinned by a commit
        assert re.fullmatch(r"[\w.-]+/[\w.-]+(/[\w.-]+)*@[0-9a-f]{40}", uses), uses


def test_benchmark_template_runs_on_the_row_runner() -> None:
    template = load("benchmark-tmpl.yml")
    assert list(template["on"]) == ["workflow_call"]
    runs_on = template["jobs"]["benchmark"]["runs-on"]
    row = {"runner": "mi355x"}
    ranked = '["mi355x-amds_04","nodes:1","ci-job-2.500-00112233aabbccdd","ci-attempt-{0}"]'
    cases = [
        ('["", ""]', "", "mi355x"),
        ('["", "mi355x-amds_04"]', "", "mi355x-amds_04"),
        ('["", "mi355x-amds_04"]', '["", ""]', "mi355x-amds_04"),  # priority without labels
        ('["", "mi355x-amds_04"]', json.dumps(["", ranked]),
         ["mi355x-amds_04", "nodes:1", "ci-job-2.500-00112233aabbccdd", "ci-attempt-3"]),
    ]  # fmt: skip
    for pins, labels, want in cases:
        outputs = {"runs-on": pins, "labels": labels}
        ctx = {"needs": {"rows": {"outputs": outputs}}, "matrix": {"row": row},
               "strategy": {"job-index": 1}, "github": {"run_attempt": 3}}  # fmt: skip
        assert render(runs_on, ctx) == want


def test_push_with_reuse_republishes_instead_of_sweeping(api, tmp_path) -> None:
    pr = green_pr(api.state)
    merged = pr.merge()  # the runner's checkout is now the pushed merge commit
    world = World(pr.runner.path, tmp_path, api.url, api.state.requests)
    run = simulate(world, "run-sweep.yml", "push", push_payload(pr.before, merged))
    assert run.outputs["reuse-gate"]["reuse-source-run-id"] == str(RUN), run.logs["reuse-gate"]
    assert run.ran("republish"), run.logs["republish"]
    assert run.jobs["setup"] == "skipped" and run.dispatches == []
    # This run carries the reused run's results and its record of what it measured.
    assert {"results_bmk", "sweep-manifest", "changelog-metadata"} <= set(run.artifacts)
    manifest = json.loads((run.artifacts["sweep-manifest"] / "sweep-manifest.json").read_text())
    assert manifest == pr.manifests[RUN]


def test_a_source_whose_results_changed_since_sealed_is_not_republished(api, tmp_path) -> None:
    """The issuer sealed RUN's results_bmk; GitHub now lists another archive of that name
    (here one holding no file at all). The gate compares the listing's digest with what
    was sealed, so nothing is republished and the merge is swept instead."""
    pr = green_pr(api.state)
    merged = pr.merge()
    results = next(a for a in api.state.artifacts[RUN] if a["name"] == "results_bmk")
    world = World(pr.runner.path, tmp_path, api.url, api.state.requests)
    api.state.blobs[results["id"]] = b"PK\x05\x06" + b"\0" * 18  # an empty zip
    run = simulate(world, "run-sweep.yml", "push", push_payload(pr.before, merged))
    gate = run.outputs["reuse-gate"]
    assert gate["reuse-enabled"] == "false"
    assert f"run {RUN}'s results_bmk is not the archive its receipt sealed" in gate["reuse-reason"]
    assert run.jobs["republish"] == "skipped" and run.ran("setup")


def test_synchronize_with_reuse_request_skips_the_pr_sweep(api, tmp_path) -> None:
    pr = green_pr(api.state)
    pr.runner.git("checkout", "-q", "--detach", pr.merge_commit(pr.sha1))
    world = World(pr.runner.path, tmp_path, api.url, api.state.requests)
    payload = pr_payload("synchronize", ["full-sweep-fail-fast"], number=7, head_sha=pr.sha1)
    run = simulate(world, "run-sweep.yml", "pull_request", payload)
    assert run.outputs["reuse-gate"]["skip-pr-sweep"] == "true", run.logs["reuse-gate"]
    assert run.jobs["setup"] == "skipped" and not run.ran("republish")
    assert run.dispatches == []
    # The PR head says what the maintainer will get at merge.
    assert run.writes["reuse-gate"] == [("POST", f"/repos/acme/bench/statuses/{pr.sha1}")]
    (status,) = api.state.statuses[pr.sha1]
    assert status["state"] == "success" and status["context"] == "infx/reuse"


def test_status_functions_follow_the_whole_needs_chain() -> None:
    """The harness's model of job status, pinned: a skipped grandparent makes success() false."""
    outputs = {"has-canary": "true", "over-budget": "false"}
    ctx = {
        "needs": {
            "setup": {"result": "success", "outputs": outputs},
            "budget-approval": {"result": "skipped", "outputs": {}},
        }
    }
    canary_if = "needs.setup.outputs.has-canary == 'true'"
    assert not condition(canary_if, ctx, Status(success=False))
    assert condition(WORKFLOW["jobs"]["canary"]["if"], ctx, Status(success=False))


LABEL_EVENTS_ON_CLOSED = [
    (action, labels, event_label)
    for action, labels, event_label, draft, fork in CASES
    if action in ("labeled", "unlabeled") and not draft and not fork
]


@pytest.mark.parametrize(
    ("action", "labels", "event_label"),
    LABEL_EVENTS_ON_CLOSED,
    ids=[f"{a}-{'+'.join(lb) or 'none'}-{e}" for a, lb, e in LABEL_EVENTS_ON_CLOSED],
)
def test_sweep_labels_on_a_closed_pr_start_nothing(
    world: World, sweep_repo: SweepRepo, action, labels, event_label
) -> None:
    """GitHub sends label events for closed (and merged) PRs too: a label added after the
    merge, or a bot relabelling old PRs, must not spend GPU time."""
    payload = pr(sweep_repo, action, labels, event_label, state="closed")
    assert triggered(WORKFLOW, "pull_request", payload, ["perf-changelog.yaml"])
    run = simulate(world, "run-sweep.yml", "pull_request", payload)
    assert run.jobs["setup"] == "skipped" and run.jobs["labels"] == "skipped"
    assert run.dispatches == []
    assert not decide_event("pull_request", payload).run
