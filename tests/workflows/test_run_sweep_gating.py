"""The gating of run-sweep.yml, computed from the workflow file for every combination of
event, action, labels, draft and fork, against what a maintainer expects."""

from __future__ import annotations

import itertools
import json
import re

import pytest

from infx.workflows.expressions import render
from tests.workflows.harness import load, pr_payload, push_payload, simulate, triggered

WORKFLOW = load("run-sweep.yml")
BENCH_JOBS = [
    name
    for name, job in WORKFLOW["jobs"].items()
    if "benchmark-tmpl.yml" in str(job.get("uses", ""))
]
ROW = {
    "image": "i",
    "model": "m",
    "model-prefix": "mp",
    "precision": "fp8",
    "framework": "vllm",
    "runner": "mi355x",
    "isl": 1024,
    "osl": 1024,
    "tp": 8,
    "pp": 1,
    "dcp-size": 1,
    "pcp-size": 1,
    "conc": 4,
    "max-model-len": 2304,
    "ep": 1,
    "dp-attn": False,
    "spec-decoding": "none",
    "exp-name": "mp_1k1k",
    "disagg": False,
    "run-eval": False,
    "eval-only": False,
}
AGENTIC = {
    "image": "i",
    "model": "m",
    "model-prefix": "mp",
    "precision": "fp8",
    "framework": "vllm",
    "runner": "cluster:mi355x-amds",
    "tp": 8,
    "pp": 1,
    "dcp-size": 1,
    "pcp-size": 1,
    "ep": 1,
    "dp-attn": False,
    "spec-decoding": "none",
    "conc": 1,
    "kv-offloading": "none",
    "total-cpu-dram-gb": 0,
    "duration": 3600,
    "exp-name": "mp_tp8_conc1_kvnone",
    "scenario-type": "agentic-coding",
}
PLAN = {
    "single_node": {"1k1k": [ROW, {**ROW, "conc": 8}], "8k1k": [], "agentic": [AGENTIC]},
    "multi_node": {"1k1k": [], "8k1k": [], "agentic": []},
    "evals": [{**ROW, "run-eval": True, "eval-only": True}],
    "agentic_evals": [],
    "multinode_evals": [],
    "multinode_agentic_evals": [],
    "changelog_metadata": {"base_ref": "a", "head_ref": "b", "entries": []},
}

PRIMARY = {
    "sweep-enabled": False,
    "full-sweep-fail-fast": True,
    "full-sweep-enabled": True,
    "full-sweep-fail-fast-no-canary": False,
    "non-canary-full-sweep-enabled": False,
}
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


@pytest.mark.parametrize(
    ("action", "labels", "event_label", "draft", "fork"),
    CASES,
    ids=[
        f"{a}-{'+'.join(lb) or 'none'}-{e}-{'draft' if d else 'ready'}-{'fork' if f else 'same'}"
        for a, lb, e, d, f in CASES
    ],
)
def test_pull_request_gating(tmp_path, action, labels, event_label, draft, fork) -> None:
    payload = pr_payload(action, labels, event_label, draft, fork)
    want = expected(action, labels, event_label, draft, fork)
    fires = triggered(WORKFLOW, "pull_request", payload, ["perf-changelog.yaml"])
    if want is None:
        assert not fires
        return
    assert fires
    run = simulate(WORKFLOW, "pull_request", payload, tmp_path, PLAN)
    gpu_jobs = {job for job in BENCH_JOBS if run.ran(job)}
    if want == "error":
        assert run.jobs["setup"] == "failure"
        assert "more than one sweep label" in run.errors[0]
        assert gpu_jobs == set()
        return
    canary, sweep = want
    assert run.ran("canary") == canary
    assert ("single" in gpu_jobs) == sweep
    if not sweep:
        assert gpu_jobs == set()


def test_push_to_main_runs_canary_then_sweep(tmp_path) -> None:
    payload = push_payload()
    assert triggered(WORKFLOW, "push", payload, ["perf-changelog.yaml"])
    assert not triggered(WORKFLOW, "push", payload, ["README.md"])
    run = simulate(WORKFLOW, "push", payload, tmp_path, PLAN)
    assert {job for job in BENCH_JOBS if run.ran(job)} == {"canary", "single", "agentic", "evals"}
    assert json.loads(run.outputs["setup"]["canary"])[0]["conc"] == 4
    assert [r["conc"] for r in json.loads(run.outputs["setup"]["single"])] == [8]


@pytest.mark.parametrize(
    ("canary", "sweep_runs"), [("success", True), ("failure", False), ("cancelled", False)]
)
def test_a_failed_canary_blocks_the_sweep(tmp_path, canary: str, sweep_runs: bool) -> None:
    payload = pr_payload("synchronize", ["full-sweep-enabled"])
    run = simulate(WORKFLOW, "pull_request", payload, tmp_path, PLAN, outcome={"canary": canary})
    assert run.jobs["canary"] == canary
    assert run.ran("single") is sweep_runs
    assert run.ran("agentic") is sweep_runs


def test_no_canary_label_runs_the_sweep_without_one(tmp_path) -> None:
    payload = pr_payload("synchronize", ["non-canary-full-sweep-enabled"])
    run = simulate(WORKFLOW, "pull_request", payload, tmp_path, PLAN)
    assert run.jobs["canary"] == "skipped" and run.ran("single")
    assert [r["conc"] for r in json.loads(run.outputs["setup"]["single"])] == [4, 8]


def group(payload: dict) -> str:
    ctx = {
        "github": {
            "event_name": "pull_request",
            "event": payload,
            "sha": "f" * 40,
            "run_id": 99,
            "action": payload["action"],
        }
    }
    return render(WORKFLOW["concurrency"]["group"], ctx)


def test_concurrency_unrelated_label_gets_its_own_group() -> None:
    base = group(pr_payload("synchronize", ["full-sweep-enabled"]))
    assert base == "run-sweep-17"
    assert group(pr_payload("labeled", ["full-sweep-enabled"], "full-sweep-enabled")) == base
    assert group(pr_payload("unlabeled", [], "sweep-enabled")) == base
    assert (
        group(pr_payload("labeled", ["documentation"], "documentation"))
        == "run-sweep-17-unrelated-99"
    )
    assert WORKFLOW["concurrency"]["cancel-in-progress"] is True


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
    text = (load.__globals__["WORKFLOWS"] / name).read_text()
    for uses in re.findall(r"uses:\s*(\S+)", text):
        if uses.startswith(("./", "$/")):
            continue
        assert re.fullmatch(r"[\w.-]+/[\w.-]+@[0-9a-f]{40}", uses), uses


def test_benchmark_template_runs_on_the_row_runner() -> None:
    template = load("benchmark-tmpl.yml")
    assert list(template["on"]) == ["workflow_call"]
    assert template["jobs"]["benchmark"]["runs-on"] == "${{ inputs.runner }}"


def test_push_with_reuse_republishes_instead_of_sweeping(tmp_path) -> None:
    reuse = {"reuse-enabled": "true", "skip-pr-sweep": "false", "reuse-source-run-id": "1039"}
    run = simulate(WORKFLOW, "push", push_payload(), tmp_path, PLAN, reuse=reuse)
    assert run.ran("republish")
    assert run.jobs["setup"] == "skipped"
    assert {job for job in BENCH_JOBS if run.ran(job)} == set()


def test_synchronize_with_reuse_request_skips_the_pr_sweep(tmp_path) -> None:
    payload = pr_payload("synchronize", ["full-sweep-fail-fast"])
    skip = {"reuse-enabled": "false", "skip-pr-sweep": "true"}
    run = simulate(WORKFLOW, "pull_request", payload, tmp_path, PLAN, reuse=skip)
    assert run.jobs["setup"] == "skipped" and not run.ran("republish")
    assert {job for job in BENCH_JOBS if run.ran(job)} == set()


def test_failed_reuse_gate_means_a_normal_sweep(tmp_path) -> None:
    run = simulate(
        WORKFLOW, "push", push_payload(), tmp_path, PLAN, outcome={"reuse-gate": "failure"}
    )
    assert run.jobs["reuse-gate"] == "failure" and not run.ran("republish")
    assert run.ran("setup") and run.ran("canary") and run.ran("single")


def test_reuse_gate_only_on_push_and_same_repo_synchronize(tmp_path) -> None:
    for payload, expected in [
        (pr_payload("synchronize", ["full-sweep-enabled"]), "success"),
        (pr_payload("synchronize", ["full-sweep-enabled"], fork=True), "skipped"),
        (pr_payload("labeled", ["full-sweep-enabled"], "full-sweep-enabled"), "skipped"),
    ]:
        assert (
            simulate(WORKFLOW, "pull_request", payload, tmp_path, PLAN).jobs["reuse-gate"]
            == expected
        )
