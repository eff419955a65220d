"""`infx reuse gate` against a local GitHub API: every check of the reuse decision."""

from __future__ import annotations

import json

from tests.conftest import LINK, MASTER
from tests.github.fake_api import Fault
from tests.github.scenario import MAIN_ENTRY, OTHER_SHA, PR_ENTRY, RUN, changelog, green_pr, seal
from tests.step_files import read_step_file

AMD = "configs__amd-master.yaml"
RECIPE = "recipes__llama70b_fp8_mi355x_vllm.sh"


def test_push_reuses_the_newest_green_run(api) -> None:
    pr = green_pr(api.state)
    result, out = pr.gate()
    assert result.exit_code == 0, result.output
    assert out["reuse-enabled"] == "true" and out["skip-pr-sweep"] == "false"
    assert out["reuse-source-run-id"] == str(RUN)
    assert out["reuse-source-pr-number"] == "7" and out["reuse-source-head-sha"] == pr.sha1
    assert out["reuse-source-run-url"].endswith(f"/actions/runs/{RUN}")


def test_outputs_written_to_github_output(api, tmp_path, monkeypatch) -> None:
    pr = green_pr(api.state)
    target = tmp_path / "out"
    monkeypatch.setenv("GITHUB_OUTPUT", str(target))
    _, printed = pr.gate()
    written = read_step_file(target)
    assert written == printed and written["reuse-source-run-id"] == str(RUN)


def test_unauthorized_authors_are_ignored(api) -> None:
    pr = green_pr(api.state)
    api.state.comments[-1]["author_association"] = "CONTRIBUTOR"
    _, out = pr.gate()
    assert out["reuse-enabled"] == "false" and "no authorized" in out["reuse-reason"]
    # A read-only collaborator passes the cheap pre-filter but not the permission check.
    api.state.add_comment(7, "reader0", "/reuse-sweep-run", 200, "COLLABORATOR")
    _, out = pr.gate()
    assert out["reuse-enabled"] == "false"
    assert ("GET", "/repos/acme/bench/collaborators/reader0/permission") in api.state.requests


def test_inline_mention_does_not_count(api) -> None:
    pr = green_pr(api.state)
    api.state.comments[-1]["body"] = "please run /reuse-sweep-run later"
    _, out = pr.gate()
    assert out["reuse-enabled"] == "false"


def test_pinned_run_and_newer_bare_command_unpins(api) -> None:
    pr = green_pr(api.state)
    tuned = MASTER.replace("conc-end: 32", "conc-end: 48")
    pr.record_run(1040, pr.branch.commit("tune", **{AMD: tuned}), 80)
    api.state.add_comment(7, "owner", "/reuse-sweep-run 1037", 150, "OWNER")
    _, out = pr.gate()
    # Run 1037 ran the first commit; a later one tuned the selected config, so the pin
    # cannot stand, and the reason names the config and the field.
    assert out["reuse-enabled"] == "false"
    assert (
        "config llama-fp8-mi355x-vllm: scenarios.fixed-seq-len[0].search-space[0].conc-end: "
        "32 -> 48" in out["reuse-reason"]
    )
    # The last command line of the newest authorized comment wins: a bare command un-pins.
    api.state.add_comment(7, "maintainer", "/use 1038\n/reuse-sweep-run", 160)
    _, out = pr.gate()
    assert out["reuse-enabled"] == "true" and out["reuse-source-run-id"] == "1040"


def test_pinned_run_stands_after_a_pr_link_fix(api) -> None:
    pr = green_pr(api.state)
    api.state.add_comment(7, "owner", "/reuse-sweep-run 1037", 150, "OWNER")
    _, out = pr.gate()
    assert out["reuse-enabled"] == "true" and out["reuse-source-run-id"] == "1037"


def test_run_not_among_the_pr_commits(api) -> None:
    pr = green_pr(api.state)
    api.state.add_comment(7, "owner", "/reuse-sweep-run 555", 150, "OWNER")
    api.state.add_run(555, head_sha=OTHER_SHA, minute=70)
    _, out = pr.gate()
    assert out["reuse-enabled"] == "false" and "not one of the PR's commits" in out["reuse-reason"]


def test_expired_artifacts(api) -> None:
    pr = green_pr(api.state)
    for artifact in api.state.artifacts[RUN]:
        artifact["expired"] = True
    _, out = pr.gate()
    # The newest run with usable artifacts is an older one, on the first commit.
    assert out["reuse-source-run-id"] == str(RUN - 1)
    for run_id in api.state.artifacts:
        for artifact in api.state.artifacts[run_id]:
            artifact["expired"] = True
    _, out = pr.gate()
    assert out["reuse-enabled"] == "false"
    assert "with an unexpired results_bmk artifact" in out["reuse-reason"]


def test_a_failed_run_is_published_neither_found_nor_pinned(api) -> None:
    """Issue 31, case 5: main's own failing sweep is never stored; a pinned one was."""
    pr = green_pr(api.state)
    api.state.runs[-1]["conclusion"] = "failure"
    _, out = pr.gate()
    assert out["reuse-source-run-id"] == str(RUN - 1)  # unpinned: only successful runs
    api.state.add_comment(7, "owner", f"/reuse-sweep-run {RUN}", 150, "OWNER")
    _, out = pr.gate()
    assert out["reuse-enabled"] == "false"
    assert f"run {RUN} concluded failure: reuse publishes only a sweep" in out["reuse-reason"]


def test_pinned_run_of_another_workflow_or_event(api) -> None:
    pr = green_pr(api.state)
    api.state.add_run(777, head_sha=pr.sha1, minute=70, path=".github/workflows/other.yml")
    api.state.add_run(778, head_sha=pr.sha1, minute=71, event="push")
    api.state.add_comment(7, "owner", "/reuse-sweep-run 777", 150, "OWNER")
    assert "not .github/workflows/run-sweep.yml" in pr.gate()[1]["reuse-reason"]
    api.state.add_comment(7, "owner", "/reuse-sweep-run 778", 151, "OWNER")
    assert "triggered by push" in pr.gate()[1]["reuse-reason"]


def test_the_run_s_own_record_of_its_labels_decides(api) -> None:
    pr = green_pr(api.state)
    # The newest run was a trimmed sweep; the full-sweep label came afterwards.
    pr.record_run(1040, pr.sha1, 70, labels=("sweep-enabled",))
    before = len(api.state.requests)  # planning read who set the labels; the gate must not
    _, out = pr.gate()
    assert out["reuse-enabled"] == "false"
    assert (
        "run 1040 recorded itself as not reusable: planned under sweep-enabled"
        in out["reuse-reason"]
    )
    assert not any("/timeline" in path for _, path in api.state.requests[before:])


def test_files_no_job_reads_keep_reuse(api) -> None:
    pr = green_pr(api.state)
    pr.branch.commit("notes", **{"docs__notes.md": "unrelated\n", "recipes__x.sh": "other\n"})
    _, out = pr.gate()
    assert out["reuse-enabled"] == "true", out["reuse-reason"]


def test_a_change_to_the_recipe_the_rows_run_voids_reuse(api) -> None:
    pr = green_pr(api.state)
    pr.branch.commit("recipe", **{RECIPE: "echo tuned\n"})
    _, out = pr.gate()
    assert out["reuse-enabled"] == "false"
    assert "file recipes/llama70b_fp8_mi355x_vllm.sh: differs" in out["reuse-reason"]


def test_merges_of_main_and_link_fixes_keep_reuse(api) -> None:
    pr = green_pr(api.state)
    api.state.runs[-1]["head_sha"] = pr.sha0  # the sweep ran before the link was fixed
    merge = pr.merge_commit(pr.sha0)
    pr.publish_merge(RUN, merge)
    seal(api.state, RUN, json.dumps(pr.manifests[RUN]).encode(), merge)
    pr.branch.on_main(
        **{
            "perf-changelog.yaml": changelog(MAIN_ENTRY),
            "configs__nvidia-master.yaml": "# main's config\n",
        }
    )
    link = f"{LINK}7"
    pr.branch.merge_main(**{"perf-changelog.yaml": changelog(MAIN_ENTRY, PR_ENTRY, link=link)})
    _, out = pr.gate()
    assert out["reuse-enabled"] == "true", out["reuse-reason"]
    assert out["reuse-source-run-id"] == str(RUN)


def test_a_merge_that_also_changes_a_recipe_voids_reuse(api) -> None:
    pr = green_pr(api.state)
    pr.branch.on_main(**{"perf-changelog.yaml": changelog(MAIN_ENTRY)})
    pr.branch.merge_main(
        **{
            "perf-changelog.yaml": changelog(MAIN_ENTRY, PR_ENTRY, link=f"{LINK}7"),
            RECIPE: "evil\n",
        }
    )
    _, out = pr.gate()
    assert out["reuse-enabled"] == "false" and RECIPE.replace("__", "/") in out["reuse-reason"]


def tuned_pr(api):
    """green_pr plus a commit tuning the vLLM config, which the sweep (run 1040) ran."""
    pr = green_pr(api.state)
    tuned = MASTER.replace("conc-end: 32", "conc-end: 48")
    pr.record_run(1040, pr.branch.commit(**{AMD: tuned}), 80)
    return pr, tuned


def test_main_editing_the_same_master_file_elsewhere_keeps_reuse(api) -> None:
    pr, tuned = tuned_pr(api)
    main_master = MASTER.replace("conc-end: 64", "conc-end: 128")  # the SGLang config
    pr.branch.on_main(**{"perf-changelog.yaml": changelog(MAIN_ENTRY), AMD: main_master})
    merged = changelog(MAIN_ENTRY, PR_ENTRY, link=f"{LINK}7")
    pr.branch.merge_main(**{"perf-changelog.yaml": merged})
    assert pr.branch.work.read(AMD.replace("__", "/")).decode() == tuned.replace(
        "conc-end: 64", "conc-end: 128"
    )
    _, out = pr.gate()
    assert out["reuse-enabled"] == "true", out["reuse-reason"]
    assert out["reuse-source-run-id"] == "1040"


def test_a_merge_that_alters_the_pr_s_own_edit_voids_reuse(api) -> None:
    pr, tuned = tuned_pr(api)
    pr.branch.on_main(**{"perf-changelog.yaml": changelog(MAIN_ENTRY)})
    pr.branch.merge_main(
        **{
            "perf-changelog.yaml": changelog(MAIN_ENTRY, PR_ENTRY, link=f"{LINK}7"),
            AMD: tuned.replace("conc-end: 48", "conc-end: 40"),
        }
    )
    _, out = pr.gate()
    assert out["reuse-enabled"] == "false"
    assert "config llama-fp8-mi355x-vllm: scenarios" in out["reuse-reason"]
    assert "conc-end: 48 -> 40" in out["reuse-reason"]


def test_main_editing_another_config_next_to_the_pr_s_edit_keeps_reuse(api) -> None:
    pr, _ = tuned_pr(api)
    # A few lines from the PR's edit, but in a config the sweep does not measure.
    near = MASTER.replace("lmsysorg/sglang:v0.5.5", "lmsysorg/sglang:v0.5.6")
    pr.branch.on_main(**{"perf-changelog.yaml": changelog(MAIN_ENTRY), AMD: near})
    pr.branch.merge_main(
        **{"perf-changelog.yaml": changelog(MAIN_ENTRY, PR_ENTRY, link=f"{LINK}7")}
    )
    _, out = pr.gate()
    assert out["reuse-enabled"] == "true", out["reuse-reason"]


def test_main_editing_the_measured_config_voids_reuse_naming_the_field(api) -> None:
    pr, _ = tuned_pr(api)
    bumped = MASTER.replace("vllm-openai-rocm:v0.11.0", "vllm-openai-rocm:v0.11.1")
    pr.branch.on_main(**{"perf-changelog.yaml": changelog(MAIN_ENTRY), AMD: bumped})
    pr.branch.merge_main(
        **{"perf-changelog.yaml": changelog(MAIN_ENTRY, PR_ENTRY, link=f"{LINK}7")}
    )
    _, out = pr.gate()
    assert out["reuse-enabled"] == "false"
    assert (
        'config llama-fp8-mi355x-vllm: image: "vllm/vllm-openai-rocm:v0.11.0" -> '
        in out["reuse-reason"]
    )


def test_incompatible_or_missing_labels(api) -> None:
    pr = green_pr(api.state)
    api.state.pulls[7]["labels"].append({"name": "evals-only"})
    assert "evals-only" in pr.gate()[1]["reuse-reason"]
    api.state.pulls[7]["labels"] = [{"name": "sweep-enabled"}]
    assert "no full-sweep label" in pr.gate()[1]["reuse-reason"]


def test_not_merged_and_no_pr(api) -> None:
    pr = green_pr(api.state)
    pr.merge()
    api.state.pulls[7]["merged_at"] = None
    assert "is not merged" in pr.gate()[1]["reuse-reason"]
    assert "belongs to no PR" in pr.gate(sha=pr.sha0)[1]["reuse-reason"]


def test_several_prs_for_one_commit(api) -> None:
    pr = green_pr(api.state)
    api.state.add_pull(
        8, head_sha=OTHER_SHA, head_ref="other", labels=["full-sweep-enabled"], merged=True
    )
    api.state.commit_pulls[pr.merge()] = [7, 8]
    result, _ = pr.gate()
    assert result.exit_code == 1 and "refusing to guess" in result.output
    api.state.comments.clear()
    _, out = pr.gate()
    assert out["reuse-enabled"] == "false" and "several PRs" in out["reuse-reason"]


def test_synchronize_skips_the_pr_sweep(api) -> None:
    pr = green_pr(api.state)
    api.state.pulls[7]["merged_at"] = None
    _, out = pr.gate(
        "pull_request",
        sha=pr.sha1,
        event_action="synchronize",
        pr_number="7",
        ref="refs/pull/7/merge",
    )
    assert out["skip-pr-sweep"] == "true" and out["reuse-enabled"] == "false"
    _, out = pr.gate(
        "pull_request", sha=pr.sha1, event_action="labeled", pr_number="7", ref="refs/pull/7/merge"
    )
    assert out["skip-pr-sweep"] == "false"


def test_more_than_100_comments_across_pages(api) -> None:
    pr = green_pr(api.state, comments=0)
    api.state.comments.clear()
    api.state.add_comment(7, "maintainer", "/reuse-sweep-run", 1)
    for i in range(180):
        api.state.add_comment(7, "reader1", f"note {i}", 2 + i, "CONTRIBUTOR")
    _, out = pr.gate()
    assert out["reuse-enabled"] == "true"
    pages = [p for m, p in api.state.requests if "/issues/7/comments" in p]
    assert len(pages) == 2 and "page=2" in pages[1]


def test_a_500_then_success(api) -> None:
    pr = green_pr(api.state)
    api.state.faults.append(Fault(r"/issues/7/comments", 500))
    _, out = pr.gate()
    assert out["reuse-enabled"] == "true"
    assert sum(1 for _, p in api.state.requests if "/issues/7/comments?per_page" in p) == 2


def test_a_403_rate_limit_with_retry_after(api) -> None:
    pr = green_pr(api.state)
    api.state.faults.append(
        Fault(
            r"/collaborators/",
            403,
            {"Retry-After": "1"},
            {"message": "You have exceeded a secondary rate limit."},
        )
    )
    _, out = pr.gate()
    assert out["reuse-enabled"] == "true"
    assert sum(1 for _, p in api.state.requests if "/collaborators/" in p) == 2


def test_api_failure_fails_closed(api) -> None:
    pr = green_pr(api.state)
    api.state.faults.append(
        Fault(r"/pulls/7/commits", 404, body={"message": "Not Found"}, times=99)
    )
    result, _ = pr.gate()
    assert result.exit_code == 2
    assert "GitHub API error while listing commits of PR #7: 404 Not Found" in result.output
    assert "Traceback" not in result.output


def test_a_429_with_retry_after_is_retried(api) -> None:
    pr = green_pr(api.state)
    api.state.faults.append(
        Fault(r"/actions/artifacts", 429, {"Retry-After": "0"}, {"message": "Too Many Requests"})
    )
    _, out = pr.gate()
    assert out["reuse-enabled"] == "true"
    assert sum(1 for _, p in api.state.requests if "name=results_bmk" in p) == 2
