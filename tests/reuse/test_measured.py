"""What merges is what was measured: every way a run that did not measure the merged
content used to be reused, on the real InferenceX configs where a config is involved."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.conftest import LINK, SHARED, entry
from tests.github.fake_api import State
from tests.github.scenario import (
    RUN,
    Green,
    green_pr,
    manifest_zip,
    open_pr,
    seal,
    seed_origin,
    zipped,
)

needs_shared = pytest.mark.skipif(not SHARED.is_dir(), reason="needs ../shared/inferencex")
AMD = "configs/amd-master.yaml"
TARGET = "dsr1-fp8-mi300x-sglang"
TWIN = "dsr1-fp8-mi325x-sglang"
WINDOW = "    - isl: 8192\n      osl: 1024\n      search-space:\n      - { tp: 8, conc-start: 4, conc-end: 64 }\n"


def shared_files() -> dict[str, bytes]:
    names = ["perf-changelog.yaml", AMD, "configs/nvidia-master.yaml", "configs/runners.yaml"]
    return {name.replace("/", "__"): (SHARED / name).read_bytes() for name in names}


def edit_in(config_text: str, key: str) -> str:
    """The master config with `conc-end: 64` -> 128 in `key`'s 8k1k search space."""
    start = config_text.index(f"\n{key}:\n")
    at = config_text.index(WINDOW, start)
    edited = WINDOW.replace("conc-end: 64", "conc-end: 128")
    return config_text[:at] + edited + config_text[at + len(WINDOW) :]


def real_pr(state: State, tmp: Path, *, amd: str | None = None, labels=("full-sweep-enabled",)):
    """PR #7 on the real InferenceX data: appends an entry for TARGET (and edits the AMD
    master config when `amd` is given), then fixes its link; the newest sweep is run RUN."""
    files = shared_files()
    origin, branch = seed_origin(tmp / "seed", files)
    history = files["perf-changelog.yaml"].decode()
    appended = history + "\n" + entry(keys=[TARGET], description="Raise conc-end")
    first = {"perf-changelog.yaml": appended}
    if amd is not None:
        first["configs__amd-master.yaml"] = amd
    sha0 = branch.commit("entry", **first)
    linked = appended.replace("pr-link: XXX", f"pr-link: {LINK}7")
    sha1 = branch.commit("link", **{"perf-changelog.yaml": linked})
    green = open_pr(state, origin, sha0, sha1, labels=labels, copy=False)
    green.branch = branch
    state.permissions.update({"maintainer": "write", "owner": "admin"})
    return green


def ask(state: State, body: str = "/reuse-sweep-run", minute: float = 100) -> None:
    state.add_comment(7, "maintainer", body, minute)


# --- 1. labels at run time --------------------------------------------------------------


@pytest.mark.parametrize("modifier", ["evals-only", "agentx-fast"])
def test_a_run_made_under_a_partial_label_since_removed_is_not_reused(api, modifier) -> None:
    pr = green_pr(api.state, runs=1)
    api.state.runs.clear()
    pr.record_run(RUN, pr.sha1, 60, labels=("full-sweep-fail-fast", modifier))
    # The modifier is gone by merge time; the labels on the PR look like a full sweep.
    assert [label["name"] for label in api.state.pulls[7]["labels"]] == ["full-sweep-fail-fast"]
    _, out = pr.gate()
    assert out["reuse-enabled"] == "false"
    assert (
        f"not reusable: planned under full-sweep-fail-fast with {modifier}" in out["reuse-reason"]
    )


def test_a_renamed_partial_label_is_still_partial_for_reuse_stage_and_merge(api) -> None:
    pr = green_pr(api.state, runs=1)
    settings = '[labels]\nevals-only = "evals"\n'
    pr.branch.on_main(**{"infx.toml": settings})
    api.state.runs.clear()
    pr.record_run(RUN, pr.sha1, 60, labels=("full-sweep-fail-fast", "evals"))
    assert pr.manifests[RUN]["measured"]["options"]["evals-only"] is True
    api.state.pulls[7]["labels"].append({"name": "evals"})
    _, out = pr.gate()
    assert out["reuse-enabled"] == "false"
    assert "has label evals-only, whose sweeps are not reusable" in out["reuse-reason"]


# --- 2. an edit moved to a twin config ---------------------------------------------------


@needs_shared
def test_an_edit_moved_to_a_twin_config_is_not_reused(api, tmp_path) -> None:
    amd = (SHARED / AMD).read_text()
    assert amd.count(WINDOW) > 1  # the seven lines around `isl: 8192` repeat in the real file
    pr = real_pr(api.state, tmp_path, amd=edit_in(amd, TARGET))
    pr.record_run(RUN, pr.sha1, 60, labels=("full-sweep-enabled",))
    ask(api.state)
    # The edit moves to the twin: the same lines, another config.
    pr.branch.commit("move the edit", **{"configs__amd-master.yaml": edit_in(amd, TWIN)})
    _, out = pr.gate()
    assert out["reuse-enabled"] == "false"
    reason = out["reuse-reason"]
    assert (
        f"config {TARGET}: scenarios.fixed-seq-len[0].search-space[0].conc-end: 128 -> 64" in reason
    )


@needs_shared
def test_the_real_configs_reuse_when_nothing_measured_changed(api, tmp_path) -> None:
    amd = (SHARED / AMD).read_text()
    pr = real_pr(api.state, tmp_path, amd=edit_in(amd, TARGET))
    pr.record_run(RUN, pr.sha1, 60, labels=("full-sweep-enabled",))
    ask(api.state)
    # Main edits the twin (not selected) and comments the selected config: git merges both
    # cleanly, and nothing the run measured moves.
    commented = amd.replace(f"\n{TARGET}:\n", f"\n# tuned on MI300X\n{TARGET}:\n")
    pr.branch.on_main(**{"configs__amd-master.yaml": edit_in(commented, TWIN)})
    _, out = pr.gate()
    assert out["reuse-enabled"] == "true", out["reuse-reason"]


# --- 3. the push range and the base branch ------------------------------------------------


def test_a_push_holding_another_commit_besides_the_merge_is_not_reused(api) -> None:
    pr = green_pr(api.state)
    before = pr.runner.git("rev-parse", "origin/main")
    # Someone pushes a commit of their own first, then the squash merge on top, in one push.
    pr.branch.on_main("unswept change", **{"recipes__x.sh": "echo never swept\n"})
    pr.merge()
    _, out = pr.gate(before=before)
    assert out["reuse-enabled"] == "false"
    assert "holds more than PR #7's merge commit" in out["reuse-reason"]
    # The same merge pushed on its own reuses.
    _, out = pr.gate()
    assert out["reuse-enabled"] == "true", out["reuse-reason"]


def test_a_pr_merged_into_another_branch_is_not_reused_on_main(api) -> None:
    pr = green_pr(api.state)
    pr.merge()
    api.state.pulls[7]["base"]["ref"] = "release-1.0"
    _, out = pr.gate()
    assert out["reuse-enabled"] == "false"
    assert "merges into release-1.0, not main" in out["reuse-reason"]


def test_a_commit_that_is_not_the_pr_s_merge_commit_is_not_reused(api) -> None:
    pr = green_pr(api.state)
    pr.merge()
    api.state.pulls[7]["merge_commit_sha"] = "d" * 40
    _, out = pr.gate()
    assert "is not PR #7's merge commit" in out["reuse-reason"]


def test_a_push_to_another_branch_never_reuses(api) -> None:
    pr = green_pr(api.state)
    _, out = pr.gate(ref="refs/heads/release-1.0")
    assert out["reuse-enabled"] == "false" and "never reuses" in out["reuse-reason"]


# --- 4. artifacts ---------------------------------------------------------------------------


def test_a_pinned_run_with_only_per_job_artifacts_is_not_reused(api) -> None:
    pr = green_pr(api.state)
    pr.record_run(1050, pr.sha1, 70, artifacts=["bmk_agentic_x_0_0", "sweep-manifest"])
    ask(api.state, "/reuse-sweep-run 1050", 150)
    _, out = pr.gate()
    assert out["reuse-enabled"] == "false"
    assert "run 1050 has no unexpired results_bmk artifact" in out["reuse-reason"]


def test_a_run_without_its_manifest_is_not_reused(api) -> None:
    pr = green_pr(api.state)
    api.state.artifacts[RUN] = [
        a for a in api.state.artifacts[RUN] if a["name"] != "sweep-manifest"
    ]
    _, out = pr.gate()
    assert out["reuse-enabled"] == "false"
    assert f"run {RUN} has no unexpired sweep-manifest artifact" in out["reuse-reason"]


def test_a_run_that_planned_evals_needs_its_eval_results(api) -> None:
    pr = green_pr(api.state)
    sglang = entry(keys=["llama-fp8-mi355x-sglang"], description="8k1k evals")
    pr.branch.commit(**{"perf-changelog.yaml": pr.branch.work.read().decode() + "\n" + sglang})
    head = pr.branch.work.git("rev-parse", "HEAD")
    manifest = pr.record_run(1060, head, 80, artifacts=["results_bmk", "sweep-manifest"])
    assert manifest["measured"]["plan"]["rows"]["evals"] > 0
    _, out = pr.gate()
    assert "run 1060 planned evals but has no unexpired eval_results_all" in out["reuse-reason"]


def test_a_manifest_that_cannot_be_read_is_never_a_yes(api) -> None:
    pr = green_pr(api.state)
    manifest_id = next(a["id"] for a in api.state.artifacts[RUN] if a["name"] == "sweep-manifest")
    api.state.blobs[manifest_id] = manifest_zip({"format": "infx-sweep-manifest/0"})
    _, out = pr.gate()
    assert out["reuse-enabled"] == "false"
    assert (
        f"run {RUN}'s sweep-manifest is not a infx-sweep-manifest/3 manifest" in out["reuse-reason"]
    )
    api.state.blobs[manifest_id] = b"PK\x03\x04 truncated"
    result, out = pr.gate()
    assert result.exit_code == 2 and out == {}
    assert "unreadable archive" in result.output and "Traceback" not in result.output


# --- 5. origin --------------------------------------------------------------------------------


def test_a_fork_s_run_of_a_pr_commit_is_not_reused(api) -> None:
    pr = green_pr(api.state)
    pr.record_run(1070, pr.sha1, 70, head_repo="someone/bench")
    ask(api.state, "/reuse-sweep-run 1070", 150)
    _, out = pr.gate()
    assert out["reuse-enabled"] == "false"
    assert "ran commits of someone/bench, not acme/bench" in out["reuse-reason"]
    # Unpinned, the fork's newer run is passed over for the PR's own.
    ask(api.state, "/reuse-sweep-run", 160)
    _, out = pr.gate()
    assert out["reuse-enabled"] == "true" and out["reuse-source-run-id"] == str(RUN)


# --- 6. main's later edits ------------------------------------------------------------------


@needs_shared
def test_main_changing_a_selected_config_after_the_run_voids_reuse(api, tmp_path) -> None:
    amd = (SHARED / AMD).read_text()
    pr = real_pr(api.state, tmp_path, amd=edit_in(amd, TARGET))
    pr.record_run(RUN, pr.sha1, 60, labels=("full-sweep-enabled",))
    ask(api.state)
    old_image = "image: lmsysorg/sglang:v0.5.12-rocm700-mi30x\n  model: deepseek-ai/DeepSeek-R1-0528\n  model-prefix: dsr1\n  runner: mi300x"
    main_side = amd.replace(old_image, old_image.replace("v0.5.12", "v0.5.13"), 1)
    pr.branch.on_main("bump the image", **{"configs__amd-master.yaml": main_side})
    _, out = pr.gate()
    assert out["reuse-enabled"] == "false"
    assert (
        f'config {TARGET}: image: "lmsysorg/sglang:v0.5.12-rocm700-mi30x" -> '
        '"lmsysorg/sglang:v0.5.13-rocm700-mi30x"' in out["reuse-reason"]
    )


def test_main_changing_a_recipe_the_run_used_voids_reuse(api) -> None:
    pr = green_pr(api.state)
    recipe = "recipes__llama70b_fp8_mi355x_vllm.sh"
    pr.branch.on_main("tune the recipe", **{recipe: "echo tuned\n"})
    _, out = pr.gate()
    assert out["reuse-enabled"] == "false"
    assert "file recipes/llama70b_fp8_mi355x_vllm.sh: differs" in out["reuse-reason"]


def test_the_manifest_at_plan_time_equals_what_the_push_plans(api) -> None:
    """One function computes both records: a push of the very merge the run planned
    measures the same thing, digest for digest."""
    pr: Green = green_pr(api.state)
    pr.merge()
    _, out = pr.gate()
    assert out["reuse-enabled"] == "true", out["reuse-reason"]
    run_record = pr.manifests[RUN]
    assert run_record["sweep"]["event"] == "pull_request" and run_record["sweep"]["reusable"]


# --- a rerun of what failed stays reusable ------------------------------------------------------


def rerun_of(pr: Green, run_id: int, source: int, *, pr_number: int = 7, manifest=None) -> None:
    """A rerun run (workflow_dispatch of the sweep on the PR's branch) of `source`, as
    `infx sweep rerun-plan` records it: its sweep-plan holds rerun.json, its manifest is the
    lineage's, its results_bmk the merged table."""
    from infx.matrix.options import PlanOptions
    from infx.sweep.record import RunRecord

    record = RunRecord(
        run_id=run_id,
        event="workflow_dispatch",
        sha=pr.sha1,
        pr=pr_number,
        category="full-sweep-fail-fast",
        options=PlanOptions(),
        canary=True,
        fail_fast=True,
        agentx_fast=False,
        root=source,
        source=source,
        scope="missing",
        depth=1,
    )
    state = pr.state
    state.add_run(
        run_id,
        head_sha=pr.sha1,
        minute=90,
        event="workflow_dispatch",
        artifacts=["results_bmk", "sweep-manifest", "sweep-plan", "sweep-receipt"],
    )
    lineage_manifest = manifest or pr.manifests[source]
    blobs = {
        "sweep-manifest": manifest_zip(lineage_manifest),
        "sweep-plan": zipped("rerun.json", json.dumps(record.as_json())),
        "results_bmk": zipped("results.json", "{}"),
    }
    for artifact in state.artifacts[run_id]:
        state.blobs[artifact["id"]] = blobs.get(artifact["name"], b"")
    seal(state, run_id, json.dumps(lineage_manifest).encode(), pr.sha1)


def test_a_green_rerun_of_a_failed_sweep_is_reused(api) -> None:
    pr = green_pr(api.state)
    api.state.runs[-1]["conclusion"] = "failure"  # RUN left 3 jobs without results
    rerun_of(pr, 2000, RUN)
    _, out = pr.gate()
    assert out["reuse-enabled"] == "true", out["reuse-reason"]
    assert out["reuse-source-run-id"] == "2000"


@pytest.mark.parametrize(
    ("change", "says"),
    [
        ({"pr_number": 8}, "run 2000 reran PR #8's sweep, not PR #7's"),
        ({"pr_number": None}, "run 2000 reran main's sweep, not PR #7's"),
    ],
)
def test_a_rerun_of_another_sweep_is_not_reused(api, change, says) -> None:
    pr = green_pr(api.state)
    rerun_of(pr, 2000, RUN, **change)
    _, out = pr.gate()
    assert out["reuse-enabled"] == "false" and says in out["reuse-reason"]


def test_a_rerun_whose_original_is_not_the_pr_s_sweep_is_not_reused(api) -> None:
    pr = green_pr(api.state)
    api.state.add_run(1500, head_sha=pr.sha1, minute=20, event="push", branch="main")
    pr.manifests[1500] = pr.manifests[RUN]
    rerun_of(pr, 2000, 1500)
    _, out = pr.gate()
    assert "run 2000's original run 1500 was triggered by push" in out["reuse-reason"]


def test_a_dispatch_run_without_a_rerun_record_is_not_reused(api) -> None:
    pr = green_pr(api.state)
    rerun_of(pr, 2000, RUN)
    api.state.artifacts[2000] = [a for a in api.state.artifacts[2000] if a["name"] != "sweep-plan"]
    _, out = pr.gate()
    assert "run 2000 is a workflow_dispatch run but no rerun of a PR sweep" in out["reuse-reason"]


def test_a_rerun_lineage_that_mixes_two_recipes_is_not_reused(api) -> None:
    pr = green_pr(api.state)
    mixed = json.loads(json.dumps(pr.manifests[RUN]))
    mixed["sweep"]["reusable"] = False  # what rerun-plan records when stale rows remain
    rerun_of(pr, 2000, RUN, manifest=mixed)
    _, out = pr.gate()
    assert "run 2000 recorded itself as not reusable" in out["reuse-reason"]
