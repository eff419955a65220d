"""Further attacks on "what merges is what was measured": inputs the jobs read that the
manifest left out, and runs whose record is ambiguous. Each was a wrong "yes" first."""

from __future__ import annotations

import io
import json
import os
import zipfile

from tests.conftest import LINK, MASTER, entry
from tests.github.scenario import RUN, Green, green_pr, manifest_zip

EVAL_ENTRY = entry(keys=["llama-fp8-mi355x-sglang"], description="8k1k evals")


def with_evals(pr: Green, run_id: int = 1060) -> dict:
    """A newer sweep of the PR that planned eval rows, whose jobs check accuracy floors."""
    pr.branch.commit(**{"perf-changelog.yaml": pr.branch.work.read().decode() + "\n" + EVAL_ENTRY})
    head = pr.branch.work.git("rev-parse", "HEAD")
    manifest = pr.record_run(run_id, head, 80)
    assert manifest["measured"]["plan"]["rows"]["evals"] > 0
    return manifest


def ask(pr: Green, body: str) -> None:
    pr.state.comments[:] = [c for c in pr.state.comments if "/reuse-sweep-run" not in c["body"]]
    pr.state.add_comment(7, "maintainer", body, 150)


def synchronize(pr: Green) -> dict[str, str]:
    head = pr.branch.work.git("rev-parse", "HEAD")
    _, out = pr.gate(
        "pull_request", sha=head, event_action="synchronize", pr_number="7", ref="refs/pull/7/merge"
    )
    return out


# --- the settings the jobs read ------------------------------------------------------------


def test_main_raising_an_accuracy_floor_after_the_run_voids_reuse(api) -> None:
    """The eval jobs pass or fail against infx.toml's floors: a run judged under the old
    floors is not what a sweep of the merge would have published."""
    pr = green_pr(api.state)
    pr.branch.on_main("floors", **{"infx.toml": "[accuracy-floors.default]\ngsm8k = 0.50\n"})
    with_evals(pr)
    out = synchronize(pr)
    assert out["skip-pr-sweep"] == "true", out["reuse-reason"]  # nothing moved: reuse holds
    pr.branch.on_main("tighten", **{"infx.toml": "[accuracy-floors.default]\ngsm8k = 0.95\n"})
    _, out = pr.gate()
    assert out["reuse-enabled"] == "false"
    assert "file infx.toml: differs" in out["reuse-reason"]


def test_main_editing_the_floors_file_the_settings_name_voids_reuse(api) -> None:
    pr = green_pr(api.state)
    pr.branch.on_main(
        "floors",
        **{
            "infx.toml": 'accuracy-floors = "evals/thresholds.yaml"\n',
            "evals__thresholds.yaml": "default:\n  gsm8k: 0.5\n",
        },
    )
    with_evals(pr)
    pr.branch.on_main("tighten", **{"evals__thresholds.yaml": "default:\n  gsm8k: 0.95\n"})
    _, out = pr.gate()
    assert out["reuse-enabled"] == "false"
    assert "file evals/thresholds.yaml: differs" in out["reuse-reason"]


# --- ambiguous artifacts ----------------------------------------------------------------------


def add_artifact(pr: Green, run_id: int, name: str, blob: bytes) -> None:
    run = next(r for r in pr.state.runs if r["id"] == run_id)
    artifact = pr.state.artifact(run, run_id * 100 + 50 + len(pr.state.artifacts[run_id]), name)
    pr.state.artifacts[run_id].append(artifact)
    pr.state.blobs[artifact["id"]] = blob


def test_a_run_with_two_manifests_is_not_reused(api) -> None:
    """Which record is the run's? One says reusable, the other (a later attempt's, say)
    says not: no reuse rather than a guess."""
    pr = green_pr(api.state)
    partial = json.loads(json.dumps(pr.manifests[RUN]))
    partial["sweep"]["reusable"] = False
    partial["measured"]["options"]["evals-only"] = True
    add_artifact(pr, RUN, "sweep-manifest", manifest_zip(partial))
    _, out = pr.gate()
    assert out["reuse-enabled"] == "false"
    assert f"run {RUN} has 2 unexpired sweep-manifest artifacts" in out["reuse-reason"]


def test_a_run_with_two_results_tables_is_not_reused(api) -> None:
    """republish downloads results_bmk by name: with two, what it would publish is a guess."""
    pr = green_pr(api.state)
    add_artifact(pr, RUN, "results_bmk", b"")
    _, out = pr.gate()
    assert out["reuse-enabled"] == "false"
    assert f"run {RUN} has 2 unexpired results_bmk artifacts" in out["reuse-reason"]


# --- job files the settings name by folder ----------------------------------------------------


def test_a_job_file_deep_under_a_double_star_glob_counts(api) -> None:
    """`benchmarks/**` names every file below benchmarks/: a shared script two folders down
    that main changes after the run voids reuse (it used to match nothing, silently)."""
    pr = green_pr(api.state)
    settings = 'job-files = [".github/workflows/run-sweep.yml", "benchmarks/**"]\n'
    pr.branch.on_main(
        "shared scripts",
        **{"infx.toml": settings, "benchmarks__lib__common.sh": "echo v1\n"},
    )
    head = pr.branch.merge_main()
    manifest = pr.record_run(1080, head, 80)
    assert "benchmarks/lib/common.sh" in manifest["measured"]["files"]
    pr.branch.on_main("tune", **{"benchmarks__lib__common.sh": "echo v2\n"})
    _, out = pr.gate()
    assert out["reuse-enabled"] == "false"
    assert "file benchmarks/lib/common.sh: differs" in out["reuse-reason"]


def test_a_results_table_that_is_an_empty_archive_is_not_reused(api) -> None:
    """republish would find nothing in it and fail after the sweep was skipped: main would
    end with neither results nor a sweep. The gate says no, and the sweep runs."""
    pr = green_pr(api.state)
    results = next(a for a in api.state.artifacts[RUN] if a["name"] == "results_bmk")
    empty = io.BytesIO()
    zipfile.ZipFile(empty, "w").close()
    api.state.blobs[results["id"]] = empty.getvalue()
    results["size_in_bytes"] = len(empty.getvalue())
    _, out = pr.gate()
    assert out["reuse-enabled"] == "false"
    assert f"run {RUN}'s results_bmk artifact is empty" in out["reuse-reason"]


# --- a recipe that is a symbolic link ---------------------------------------------------------


def test_a_recipe_linked_to_a_shared_script_counts_the_script(api) -> None:
    """A recipe committed as a symbolic link runs the script it points at: main changing
    that script after the run voids reuse, though the link itself did not move."""
    pr = green_pr(api.state)
    work = pr.branch.work
    work.git("checkout", "-q", "main")
    work.write("recipes/common/vllm.sh", "echo v1\n")
    os.symlink("common/vllm.sh", work.path / "recipes/llama70b_fp8_mi355x_vllm.sh")
    work.commit("share the vllm recipe")
    work.git("push", "-q", "origin", "main")
    work.git("checkout", "-q", "feature")
    head = pr.branch.merge_main()
    manifest = pr.record_run(1090, head, 80)
    assert manifest["measured"]["files"]["recipes/common/vllm.sh"] is not None
    pr.branch.on_main("tune", **{"recipes__common__vllm.sh": "echo v2\n"})
    _, out = pr.gate()
    assert out["reuse-enabled"] == "false"
    assert "file recipes/common/vllm.sh: differs" in out["reuse-reason"]


# --- held: values reached through a YAML alias ----------------------------------------------


def test_main_changing_an_anchor_the_measured_config_aliases_voids_reuse(api) -> None:
    """The measured config's text does not move, but its image is an alias of another
    config's anchor, which main bumps: configs count as parsed, so the image differs."""
    pr = green_pr(api.state)
    sglang, vllm = MASTER.split("\n\n")[1], MASTER.split("\n\n")[0]
    sglang_image = "image: lmsysorg/sglang:v0.5.5-rocm700-mi35x"
    anchored = sglang.replace(sglang_image, sglang_image.replace("image: ", "image: &img "))
    aliased = vllm.replace("image: vllm/vllm-openai-rocm:v0.11.0", "image: *img")
    pr.branch.on_main("share the image", **{"configs__amd-master.yaml": anchored + "\n" + aliased})
    head = pr.branch.merge_main()
    pr.record_run(1100, head, 80)
    bumped = anchored.replace("v0.5.5", "v0.5.6") + "\n" + aliased
    pr.branch.on_main("bump the shared image", **{"configs__amd-master.yaml": bumped})
    _, out = pr.gate()
    assert out["reuse-enabled"] == "false"
    assert (
        'config llama-fp8-mi355x-vllm: image: "lmsysorg/sglang:v0.5.5-rocm700-mi35x" -> '
        '"lmsysorg/sglang:v0.5.6-rocm700-mi35x"' in out["reuse-reason"]
    )


# --- a full-size sweep: one artifact per job ----------------------------------------------------


def per_job_artifacts(pr: Green, run_id: int, count: int) -> None:
    """`count` per-job artifacts of the run, listed before its aggregates, as a sweep of
    every InferenceX config (about 2,500 jobs) uploads them."""
    run = next(r for r in pr.state.runs if r["id"] == run_id)
    jobs = [pr.state.artifact(run, 9_000_000 + i, f"bmk_single_x_{i}") for i in range(count)]
    pr.state.artifacts[run_id][:0] = jobs


def test_a_full_size_sweep_is_decided_within_the_request_budget(api) -> None:
    """The source run's artifacts are read by name once they fill more than a page, so a
    run with 2,500 of them is decided in at most 15 requests, pinned or not, the issuer's
    receipt of it and that receipt's attestation read too (its whole listing took 35, and
    past 3,000 artifacts the page cap refused it)."""
    pr = green_pr(api.state)
    per_job_artifacts(pr, RUN, 2500)
    pr.merge()
    for pin in ("", f" {RUN}"):
        ask(pr, f"/reuse-sweep-run{pin}")
        api.state.requests.clear()
        _, out = pr.gate()
        assert out["reuse-enabled"] == "true", out["reuse-reason"]
        assert api.state.api_requests() <= 15, "\n".join(p for _, p in api.state.requests)


def test_a_second_manifest_beyond_the_first_page_is_still_seen(api) -> None:
    pr = green_pr(api.state)
    per_job_artifacts(pr, RUN, 300)
    partial = json.loads(json.dumps(pr.manifests[RUN]))
    partial["sweep"]["reusable"] = False
    add_artifact(pr, RUN, "sweep-manifest", manifest_zip(partial))
    _, out = pr.gate()
    assert out["reuse-enabled"] == "false"
    assert f"run {RUN} has 2 unexpired sweep-manifest artifacts" in out["reuse-reason"]


# --- what republish copies besides the results ------------------------------------------------


def test_an_entry_description_edited_after_the_sweep_voids_reuse(api) -> None:
    """The PR's sweep ran with one description of its entry; the PR then rewrote it. Main's
    own sweep of the merge would publish the new text in its changelog-metadata; reuse
    republishes the run's, naming the old one."""
    from tests.github.scenario import PR_ENTRY, changelog

    pr = green_pr(api.state)
    edited = PR_ENTRY.replace('"PR change"', '"Official image, no flag changes"')
    pr.branch.commit("reword", **{"perf-changelog.yaml": changelog(edited, link=f"{LINK}7")})
    _, out = pr.gate()
    assert out["reuse-enabled"] == "false", out
    assert (
        'changelog entry [0].description[0]: "PR change" -> "Official image, no flag changes"'
        in out["reuse-reason"]
    ), out["reuse-reason"]
