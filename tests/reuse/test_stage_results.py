"""`infx stage-results` on /stage-results comments."""

from __future__ import annotations

from tests.github.fake_api import HTML, Fault
from tests.github.scenario import OTHER_SHA, RUN, comment_event, green_pr, invoke, issue, zipped


def staged_pr(state):
    pr = green_pr(state)
    run = state.runs[-1]
    state.artifacts[RUN] = [
        state.artifact(run, 1, "results_bmk"),
        state.artifact(run, 2, "changelog-metadata"),
        state.artifact(run, 3, "bmk_single_x_0"),
    ]
    return pr


def stage(api, tmp_path, body: str, login: str = "maintainer", **kwargs):
    comment = api.state.add_comment(7, login, body, 400)
    summary = tmp_path / "summary.md"
    env = {**comment_event(tmp_path, comment, **kwargs), "GITHUB_STEP_SUMMARY": str(summary)}
    result = invoke(["stage-results"], env)
    reactions = [r["content"] for r in api.state.reactions.get(comment["id"], [])]
    return result, reactions, summary.read_text() if summary.exists() else ""


def test_pinned_run_is_staged_and_dispatched(api, tmp_path) -> None:
    staged_pr(api.state)
    result, reactions, summary = stage(api, tmp_path, f"  /stage-results {RUN}\n")
    assert result.exit_code == 0, result.output
    assert reactions == ["+1"]
    (dispatch,) = api.state.dispatches
    assert dispatch["event_type"] == "stage-results"
    payload = dispatch["client_payload"]
    assert (
        payload["run-id"] == RUN
        and payload["pr-number"] == 7
        and payload["requested-by"] == "maintainer"
    )
    assert [a["name"] for a in payload["artifacts"]] == ["changelog-metadata", "results_bmk"]
    assert f"| `results_bmk` | `pr7-run{RUN}-results_bmk` |" in summary


def test_unpinned_takes_the_newest_valid_run(api, tmp_path) -> None:
    pr = staged_pr(api.state)
    api.state.add_run(
        2000,
        head_sha=pr.sha1,
        minute=80,
        conclusion="cancelled",
        artifacts=["results_bmk", "changelog-metadata"],
    )
    issue(api.state, 2000)
    result, reactions, _ = stage(api, tmp_path, "/stage-results")
    assert reactions == ["+1"] and "run 2000" in result.output


def test_usage_errors(api, tmp_path) -> None:
    staged_pr(api.state)
    result, reactions, summary = stage(api, tmp_path, "/stage-results please")
    assert result.exit_code == 0
    assert reactions == ["-1"] and "usage: /stage-results \\[&lt;run\\_id&gt;\\]" in summary
    assert api.state.dispatches == []


def test_requester_needs_write(api, tmp_path) -> None:
    staged_pr(api.state)
    result, reactions, _ = stage(api, tmp_path, f"/stage-results {RUN}", login="reader0")
    assert reactions == ["-1"] and "lacks write" in result.output
    assert api.state.dispatches == []


def test_run_checks(api, tmp_path) -> None:
    staged_pr(api.state)
    api.state.add_run(
        3000, head_sha=OTHER_SHA, minute=90, artifacts=["results_bmk", "changelog-metadata"]
    )
    assert "not one of the PR's commits" in stage(api, tmp_path, "/stage-results 3000")[0].output
    api.state.artifacts[RUN] = [api.state.artifact(api.state.runs[-1], 1, "results_bmk")]
    assert (
        "lacks unexpired changelog-metadata"
        in stage(api, tmp_path, f"/stage-results {RUN}")[0].output
    )
    api.state.pulls[7]["labels"] = [{"name": "sweep-enabled"}]
    assert "no full-sweep label" in stage(api, tmp_path, f"/stage-results {RUN}")[0].output


def test_label_history_matters(api, tmp_path) -> None:
    staged_pr(api.state)
    api.state.timeline[7] = []
    api.state.label(7, "labeled", "full-sweep-enabled", 65)
    result, reactions, _ = stage(api, tmp_path, f"/stage-results {RUN}")
    assert reactions == ["-1"] and "without a full-sweep label" in result.output


def test_other_comments_and_issues_are_ignored(api, tmp_path) -> None:
    staged_pr(api.state)
    result, reactions, _ = stage(api, tmp_path, "thanks")
    assert reactions == [] and "not a /stage-results command" in result.output
    result, reactions, _ = stage(api, tmp_path, "/stage-results 1", on_pr=False)
    assert reactions == [] and "not a pull request" in result.output


def test_an_answer_that_is_not_json_stages_nothing(api, tmp_path) -> None:
    staged_pr(api.state)
    api.state.faults.append(Fault(r"/pulls/7$", raw=HTML, content_type="text/html", times=9))
    result, reactions, _ = stage(api, tmp_path, f"/stage-results {RUN}")
    assert result.exit_code == 2 and reactions == [] and api.state.dispatches == []
    assert result.output.strip() == (
        "infx: error: unexpected GitHub response while reading PR #7: text/html, not JSON"
    )


def test_a_renamed_full_sweep_label_is_the_full_sweep_it_names(api, tmp_path) -> None:
    """[labels] renames hold for /stage-results as for every command: the repository calls
    full-sweep-enabled `sweep-full`, and a run made under it is stageable."""
    pr = staged_pr(api.state)
    pr.branch.on_main(**{"infx.toml": '[labels]\nfull-sweep-enabled = "sweep-full"\n'})
    api.state.pulls[7]["labels"] = [{"name": "sweep-full"}]
    api.state.timeline[7] = []
    api.state.label(7, "labeled", "sweep-full", 10)
    comment = api.state.add_comment(7, "maintainer", f"/stage-results {RUN}", 400)
    result = invoke(["stage-results"], comment_event(tmp_path, comment), cwd=pr.at_main().path)
    assert result.exit_code == 0, result.output
    assert f"staged 2 artifact(s) of run {RUN}" in result.output
    # Without the rename (the PR's own commit has no infx.toml) the label means nothing.
    pr.runner.git("checkout", "-q", "--detach", pr.sha1)
    result = invoke(["stage-results"], comment_event(tmp_path, comment), cwd=pr.runner.path)
    assert "no full-sweep label" in result.output


def test_a_run_with_two_results_tables_is_not_staged(api, tmp_path) -> None:
    """Two results_bmk of one run (a later attempt's beside the first) would be staged
    under one name: which one lands is a guess, so neither is staged."""
    staged_pr(api.state)
    run = api.state.runs[-1]
    api.state.artifacts[RUN].append(api.state.artifact(run, 4, "results_bmk"))
    result, reactions, _ = stage(api, tmp_path, f"/stage-results {RUN}")
    assert reactions == ["-1"] and not api.state.dispatches
    assert f"run {RUN} has 2 unexpired results_bmk artifacts" in result.output


def test_a_dispatched_run_on_the_pr_branch_is_not_staged(api, tmp_path) -> None:
    """/stage-results stages a pull_request run of the PR's commits (docs/reuse.md). A
    workflow_dispatch run of the sweep on the PR's branch ran whatever its `rerun-of` named
    (another PR's sweep, main's), and nothing checks that lineage here: staged under
    `pr7-run<id>-...`, another sweep's results passed as this PR's."""
    pr = staged_pr(api.state)
    api.state.add_run(
        3100,
        head_sha=pr.sha1,
        minute=90,
        event="workflow_dispatch",
        artifacts=["results_bmk", "changelog-metadata", "sweep-plan"],
    )
    result, reactions, _ = stage(api, tmp_path, "/stage-results 3100")
    assert reactions == ["-1"], result.output
    assert "run 3100 was triggered by workflow_dispatch, not pull_request" in result.output
    assert api.state.dispatches == []
    result, reactions, _ = stage(api, tmp_path, f"/stage-results {RUN}")
    assert reactions == ["+1"] and f"run {RUN}" in result.output, result.output


def test_after_a_rerun_an_unpinned_stage_asks_for_the_older_run_by_its_id(api, tmp_path) -> None:
    """After /rerun-failed, the PR's newest results are the rerun's, which are never
    staged. Staging the older pull_request run unasked would pass its results (the failed
    points missing) off as the PR's latest: the reply names both runs and why, and asks
    for a pin; the pin stages it. A new sweep after the rerun is staged as before."""
    pr = staged_pr(api.state)
    api.state.add_run(3100, head_sha=pr.sha1, minute=90, event="workflow_dispatch",
                      artifacts=["results_bmk", "changelog-metadata", "sweep-plan"])  # fmt: skip
    result, reactions, summary = stage(api, tmp_path, "/stage-results")
    assert reactions == ["-1"] and api.state.dispatches == [], result.output
    said = " ".join(result.output.split())
    assert (
        f"run 3100 (workflow_dispatch), newer than run {RUN}, is PR #7's latest sweep, and a "
        "dispatched rerun is never staged (it carries its source's results, a lineage "
        f"staging does not check); the newest stageable run is {RUN}, whose results lack "
        f"the rerun's: to stage them anyway, comment /stage-results {RUN}"
    ) in said, said
    assert "/stage-results" in summary and "3100" in summary
    result, reactions, _ = stage(api, tmp_path, f"/stage-results {RUN}")
    assert reactions == ["+1"] and f"staged 2 artifact(s) of run {RUN}" in result.output
    api.state.add_run(3300, head_sha=pr.sha1, minute=120,
                      artifacts=["results_bmk", "changelog-metadata"])  # fmt: skip
    issue(api.state, 3300)
    result, reactions, _ = stage(api, tmp_path, "/stage-results")
    assert reactions == ["+1"] and "staged 2 artifact(s) of run 3300" in result.output


def test_another_workflow_s_dispatch_on_the_branch_is_no_rerun_that_blocks_staging(
    api, tmp_path
) -> None:
    """Only the sweep workflow's dispatches are reruns: any other workflow run on the
    branch that uploads an artifact of that name holds no sweep results."""
    pr = staged_pr(api.state)
    api.state.add_run(3400, head_sha=pr.sha1, minute=90, event="workflow_dispatch",
                      path=".github/workflows/other.yml",
                      artifacts=["results_bmk", "changelog-metadata"])  # fmt: skip
    result, reactions, _ = stage(api, tmp_path, "/stage-results")
    assert reactions == ["+1"] and f"staged 2 artifact(s) of run {RUN}" in result.output


def test_a_run_of_another_branch_holding_a_pr_commit_is_not_staged(api, tmp_path) -> None:
    """PR #7's branch holds a commit of another branch (merged in, or branched from it):
    that branch's own pull_request run ran its own merge, not PR #7's. Its head_sha is one
    of PR #7's commits, and pinned, nothing else was asked of it: staged as PR #7's."""
    pr = staged_pr(api.state)
    api.state.add_run(
        3200,
        head_sha=pr.sha0,
        minute=90,
        branch="other-feature",
        artifacts=["results_bmk", "changelog-metadata"],
    )
    result, reactions, _ = stage(api, tmp_path, "/stage-results 3200")
    assert reactions == ["-1"], result.output
    assert "run 3200 ran branch other-feature, not PR #7's branch feature" in result.output
    assert api.state.dispatches == []


def another_prs_run(state, pr, run_id: int) -> None:
    """PR #8, from PR #7's branch into another base: its pull_request run has PR #7's head
    branch and head commit, and GitHub checked out refs/pull/8/merge (its attestation,
    read by the issuer, says so)."""
    state.add_pull(8, head_sha=pr.sha1, base="release", commits=[pr.sha0, pr.sha1])
    state.add_run(
        run_id,
        head_sha=pr.sha1,
        minute=90,
        artifacts=["results_bmk", "changelog-metadata", "sweep-receipt"],
    )
    claim = state.artifacts[run_id][2]["id"]
    state.blobs[claim] = zipped("receipt.json", '{"kind": "claim"}')
    state.run_checkouts[run_id] = ("refs/pull/8/merge", "c" * 40)
    issue(state, run_id)


def test_a_run_of_another_pr_from_the_same_branch_is_not_staged(api, tmp_path) -> None:
    """Same head branch, same head commit, another PR (into another base): it measured
    that PR's merge. Staging asks the issuer's receipt which PR's merge the run checked
    out, as reuse does; pinned or the newest, it is refused in one line."""
    pr = staged_pr(api.state)
    another_prs_run(api.state, pr, 3300)
    result, reactions, _ = stage(api, tmp_path, "/stage-results 3300")
    assert reactions == ["-1"] and api.state.dispatches == [], result.output
    assert (
        "run 3300 ran for refs/pull/8/merge, not PR #7's merge with main (refs/pull/7/merge)"
        in result.output
    )
    result, reactions, _ = stage(api, tmp_path, "/stage-results")
    assert reactions == ["-1"] and "refs/pull/8/merge" in result.output
    result, reactions, _ = stage(api, tmp_path, f"/stage-results {RUN}")
    assert reactions == ["+1"], result.output


def test_a_run_no_issuer_receipt_vouches_for_is_not_staged(api, tmp_path) -> None:
    """Without the issuer's receipt, nothing says which PR the run ran for: refused."""
    pr = staged_pr(api.state)
    api.state.add_run(3400, head_sha=pr.sha1, minute=90,
                      artifacts=["results_bmk", "changelog-metadata"])  # fmt: skip
    result, reactions, _ = stage(api, tmp_path, "/stage-results 3400")
    assert reactions == ["-1"] and "run 3400 has no receipt from the issuer" in result.output
