"""The receipt reuse trusts is the issuer's, and says what GitHub says the run ran (issue 31,
cases 1, 6 and 10, and the issuer's identity). Each attack was a "yes" of the reuse gate
first: a run of another base (a second pull request from the same head into a branch whose
workflow uploads chosen numbers, or the PR's own base changed for one run), an honest rerun
laundering it, a dispatched rerun that ran its branch's workflow files, a receipt some
other workflow wrote, a republished artifact the receipt does not seal."""

from __future__ import annotations

import json

import pytest

from infx.reuse.issuer import ISSUER_WORKFLOW, issued_artifact
from tests.github.fake_api import REPO
from tests.github.scenario import (
    ISSUER_RUNS,
    RUN,
    Green,
    green_pr,
    issue,
    manifest_zip,
    zipped,
)
from tests.github.sigstore import Fulcio, identity
from tests.reuse.test_forged import (
    FORGED,
    FORGED_TABLE,
    HONEST,
    WORKFLOW,
    ask,
    honest_manifest,
    refused,
    rerun,
    with_workflows,
)


def evil_base(pr: Green) -> str:
    """A branch `evil-base`: main plus a sweep workflow that uploads chosen numbers."""
    work = pr.branch.work
    work.git("checkout", "-q", "-b", "evil-base", "origin/main")
    work.commit("numbers", **{WORKFLOW: FORGED})
    work.git("push", "-q", "origin", "evil-base")
    work.git("checkout", "-q", "feature")
    pr.runner.git("fetch", "-q", "origin", "+refs/heads/*:refs/remotes/origin/*")
    return pr.runner.git("rev-parse", "origin/evil-base")


def merged_into(pr: Green, base: str, head: str) -> str:
    """GitHub's test merge of `head` into `base`, kept in origin."""
    from infx.reuse.preview import merge_preview

    tree = merge_preview(pr.runner.path, base, head, "perf-changelog.yaml")
    merge = pr.runner.git("commit-tree", tree, "-p", base, "-p", head, "-m", "test merge")
    pr.runner.git("push", "-q", "origin", f"{merge}:refs/infx-test/{merge[:12]}")
    return merge


def run_of_another_base(pr: Green, run_id: int, ref: str, merge: str, **issued) -> None:
    """A pull_request run of the PR's head that checked out `merge` (GitHub's `ref`): its
    workflow uploaded chosen numbers beside the honest manifest of what merges, and a claim
    sealing both; the issuer seals it as GitHub records it."""
    from tests.github.scenario import seal

    head = pr.state.pulls[7]["head"]["sha"]
    manifest = honest_manifest(pr, head)
    names = ["results_bmk", "sweep-manifest", "changelog-metadata", "sweep-receipt"]
    pr.state.add_run(run_id, head_sha=head, minute=90, artifacts=names)
    for artifact in pr.state.artifacts[run_id]:
        pr.state.blobs[artifact["id"]] = {
            "results_bmk": zipped("results.json", FORGED_TABLE),
            "sweep-manifest": manifest_zip(manifest),
        }.get(artifact["name"], zipped(f"{artifact['name']}.json", "{}"))
    pr.state.run_checkouts[run_id] = (ref, merge)
    seal(pr.state, run_id, json.dumps(manifest).encode(), merge)
    if issued:
        issue(pr.state, run_id, **issued)


# --- 1. a run of another base ----------------------------------------------------------------


def test_a_run_of_another_pull_request_into_another_base_is_refused(api) -> None:
    """PR #8: the same head into evil-base. Its run's attestation says refs/pull/8/merge."""
    pr = green_pr(api.state)
    with_workflows(pr)
    head = pr.state.pulls[7]["head"]["sha"] = pr.branch.work.git("rev-parse", "HEAD")
    api.state.add_pull(8, head_sha=head, base="evil-base", commits=[head])
    merge = merged_into(pr, evil_base(pr), head)
    run_of_another_base(pr, 2000, "refs/pull/8/merge", merge)
    ask(pr, "/use 2000")
    refused(pr, "run 2000 ran for refs/pull/8/merge, not PR #7's merge with main")


def test_the_pr_s_own_base_changed_for_one_run_is_refused(api) -> None:
    """PR #7 itself, its base set to evil-base for one run and back: its ref is its own,
    its merge commit's first parent is not a commit of main."""
    pr = green_pr(api.state)
    with_workflows(pr)
    head = pr.state.pulls[7]["head"]["sha"] = pr.branch.work.git("rev-parse", "HEAD")
    merge = merged_into(pr, evil_base(pr), head)
    run_of_another_base(pr, 2000, "refs/pull/7/merge", merge)
    ask(pr, "/use 2000")
    refused(pr, "which is not a commit of main: it ran for another base")


def test_without_an_attestation_another_pr_of_the_branch_refuses(api) -> None:
    """A repository without attestations: the issuer lists the branch's pull requests."""
    pr = green_pr(api.state)
    with_workflows(pr)
    head = pr.state.pulls[7]["head"]["sha"] = pr.branch.work.git("rev-parse", "HEAD")
    api.state.add_pull(8, head_sha=head, base="evil-base", commits=[head], state="closed")
    merge = merged_into(pr, evil_base(pr), head)
    run_of_another_base(pr, 2000, "refs/pull/8/merge", merge, attest_claim=False)
    ask(pr, "/use 2000")
    refused(pr, "run 2000 may have run for another pull request of branch feature (#8 into evil-base)")  # fmt: skip


def test_without_an_attestation_a_base_that_changed_refuses(api) -> None:
    pr = green_pr(api.state)
    with_workflows(pr)
    head = pr.state.pulls[7]["head"]["sha"] = pr.branch.work.git("rev-parse", "HEAD")
    api.state.timeline.setdefault(7, []).append(
        {"event": "base_ref_changed", "created_at": "2026-11-30T12:40:00Z"}
    )
    merge = merged_into(pr, evil_base(pr), head)
    run_of_another_base(pr, 2000, "refs/pull/7/merge", merge, attest_claim=False)
    ask(pr, "/use 2000")
    refused(pr, "PR #7's base changed or is not main, so the base it merged with is unknown")


def test_without_an_attestation_the_branch_s_only_pr_is_reused(api) -> None:
    """The control: no attestation, one pull request from the branch, into main, never
    rebased onto another base."""
    pr = green_pr(api.state)
    issue(api.state, RUN, attest_claim=False)
    _, out = pr.gate()
    assert out["reuse-enabled"] == "true", out["reuse-reason"]


def test_an_honest_rerun_of_a_run_of_another_base_does_not_launder_it(api) -> None:
    pr = green_pr(api.state)
    with_workflows(pr)
    head = pr.state.pulls[7]["head"]["sha"] = pr.branch.work.git("rev-parse", "HEAD")
    api.state.add_pull(8, head_sha=head, base="evil-base", commits=[head])
    merge = merged_into(pr, evil_base(pr), head)
    run_of_another_base(pr, 2000, "refs/pull/8/merge", merge)
    api.state.runs[-1]["conclusion"] = "failure"
    rerun(pr, 2001, head, honest_manifest(pr, head), root=2000, source=2000)
    ask(pr, "/use 2001")
    refused(pr, "run 2001's lineage: run 2000 ran for refs/pull/8/merge, not PR #7's merge")


# --- 6. a dispatched rerun runs its branch's workflow files ----------------------------------


@pytest.mark.parametrize("merged_main", [False, True])
def test_a_rerun_dispatched_on_a_branch_without_main_s_workflow_is_refused(
    api, merged_main
) -> None:
    """Main fixed its sweep workflow after the branch forked; the PR's sweep (a merge with
    main) ran the fix, its rerun dispatched on the branch ran the branch's old copy. With
    main merged into the branch first, the same rerun is reused."""
    pr = green_pr(api.state)
    with_workflows(pr)
    pr.branch.on_main("fix the sweep", **{WORKFLOW: HONEST + "# fixed\n"})
    head = pr.branch.merge_main() if merged_main else pr.branch.work.git("rev-parse", "HEAD")
    pr.record_run(1500, head, 70)
    api.state.runs[-1]["conclusion"] = "failure"
    rerun(pr, 2000, head, pr.manifests[1500], root=1500, source=1500)
    ask(pr, "/use 2000")
    if merged_main:
        _, out = pr.gate()
        assert out["reuse-enabled"] == "true", out["reuse-reason"]
        return
    refused(pr, "run 2000 ran other code than what merges: .github/workflows/run-sweep.yml at "
                f"its branch commit {head[:12]}")  # fmt: skip


# --- the issuer's identity ---------------------------------------------------------------------


def forged_receipt(pr: Green, maker: dict, attest: dict | None) -> None:
    """A receipt of RUN uploaded by run `maker` (not the issuer's), copying the issuer's
    bytes but for the table, optionally attested with identity `attest`."""
    from infx.matrix.manifest import sha256

    honest = json.loads(
        next(
            __import__("zipfile")
            .ZipFile(__import__("io").BytesIO(pr.state.blobs[a["id"]]))
            .read("run-receipt.json")
            for a in pr.state.artifacts[ISSUER_RUNS + RUN]
        )
    )
    honest["issuer"]["run"] = maker["id"]
    honest["table"] = None
    data = json.dumps(honest)
    pr.state.runs.append(maker)
    artifact = pr.state.artifact(maker, maker["id"] * 100, issued_artifact(RUN, 1))
    pr.state.artifacts[maker["id"]] = [artifact]
    pr.state.blobs[artifact["id"]] = zipped("run-receipt.json", data)
    pr.state.artifacts[ISSUER_RUNS + RUN] = []  # the honest one expired, say
    if attest is not None:
        digest = sha256(data.encode())
        pr.state.attestations.setdefault(digest, []).append(Fulcio().attest(digest, attest))


def a_run(pr: Green, run_id: int, **kw) -> dict:
    made = pr.state.add_run(
        run_id, head_sha=kw.pop("sha", "e" * 40), minute=200, artifacts=[], **kw
    )
    pr.state.runs.remove(made)
    return made


@pytest.mark.parametrize(
    ("maker", "attest", "says"),
    [
        (dict(path=ISSUER_WORKFLOW, event="pull_request"), None, "ran on pull_request"),
        (dict(path=".github/workflows/mine.yml", event="workflow_dispatch", branch="main"), None,
         "not the issuer .github/workflows/sweep-receipt.yml"),
        (dict(path=ISSUER_WORKFLOW, event="workflow_dispatch", branch="feature"), None,
         "was dispatched on feature, not main"),
        # Attested with the issuer's identity by a certificate it made itself: GitHub's
        # record of who uploaded it still says a pull request's run.
        (dict(path=ISSUER_WORKFLOW, event="pull_request", branch="feature"),
         identity(REPO, ISSUER_WORKFLOW, "refs/heads/main", "e" * 40, "workflow_run", 5000),
         "ran on pull_request"),
    ],
    ids=["issuer-file-on-a-pull-request", "another-workflow", "dispatched-on-a-branch",
         "self-attested"],
)  # fmt: skip
def test_a_receipt_the_issuer_did_not_write_is_refused(api, maker, attest, says) -> None:
    """Receipts are looked for among the issuer's own runs (its workflow_run runs, its
    dispatches on main), never the repository's artifacts by name: an artifact of the
    receipt's name that another run uploaded, titled as the issuer titles its runs, is not
    even read. (`says`: what GitHub's record of that run would tell.)"""
    pr = green_pr(api.state)
    forged_receipt(pr, a_run(pr, 5000, title=f"seal run {RUN} (pull_request)", **maker), attest)
    _, out = pr.gate()
    assert out["reuse-enabled"] == "false"
    assert f"run {RUN} has no receipt from the issuer" in out["reuse-reason"], says


def test_a_flood_of_artifacts_named_like_the_receipt_does_not_hide_it(api) -> None:
    """Any workflow (a pull request's own) can upload artifacts named
    run-receipt-<run>-<attempt>, more of them than a page, newer than the issuer's: the
    receipt is found through the issuer's runs, so they push nothing out of view."""
    pr = green_pr(api.state)
    for i in range(120):
        made = api.state.add_run(6000 + i, head_sha=pr.sha1, minute=200 + i,
                                 path=ISSUER_WORKFLOW, event="pull_request",
                                 title=f"seal run {RUN} (pull_request)",
                                 artifacts=[issued_artifact(RUN, 1)])  # fmt: skip
        api.state.runs.insert(0, api.state.runs.pop())  # the sweep runs stay last
        assert made["id"] == 6000 + i
    _, out = pr.gate()
    assert out["reuse-enabled"] == "true", out["reuse-reason"]


def test_an_issuer_run_of_a_commit_that_is_not_main_s_is_refused(api) -> None:
    """A dispatch on a tag named `main` reads as head_branch main: its commit tells."""
    pr = green_pr(api.state)
    maker = a_run(pr, 5000, path=ISSUER_WORKFLOW, event="workflow_dispatch", branch="main",
                  sha=pr.sha1, title=f"seal run {RUN} (by hand)")  # fmt: skip
    forged_receipt(pr, maker, None)
    _, out = pr.gate()
    assert out["reuse-enabled"] == "false"
    assert (
        f"issuer run 5000 ran {pr.sha1[:12]}, which is not a commit of main" in out["reuse-reason"]
    )


def test_an_unattested_receipt_of_a_genuine_issuer_run_is_reused(api) -> None:
    """A repository without attestations: GitHub's record of the issuer run vouches."""
    pr = green_pr(api.state)
    issue(api.state, RUN, attest_receipt=False)
    _, out = pr.gate()
    assert out["reuse-enabled"] == "true", out["reuse-reason"]


# --- 10. the gate compares what republish copies with what the issuer sealed ------------------


def test_a_republished_artifact_the_receipt_does_not_seal_is_refused(api) -> None:
    pr = green_pr(api.state)
    (bmk,) = [a for a in api.state.artifacts[RUN] if a["name"] == "results_bmk"]
    saved = api.state.blobs.pop(bmk["id"])
    issue(api.state, RUN)  # the issuer could not download it
    api.state.blobs[bmk["id"]] = saved
    _, out = pr.gate()
    assert out["reuse-enabled"] == "false"
    assert f"run {RUN}'s results_bmk is not sealed by its receipt" in out["reuse-reason"]


def test_an_archive_other_than_the_one_sealed_is_refused(api) -> None:
    pr = green_pr(api.state)
    (bmk,) = [a for a in api.state.artifacts[RUN] if a["name"] == "results_bmk"]
    api.state.blobs[bmk["id"]] = zipped("results.json", FORGED_TABLE)
    _, out = pr.gate()
    assert out["reuse-enabled"] == "false"
    assert f"run {RUN}'s results_bmk is not the archive its receipt sealed" in out["reuse-reason"]


def test_the_issuer_titles_its_runs_as_reuse_looks_for_them() -> None:
    """Reuse finds a run's receipt among the issuer's runs by their title: the run-name of
    main's sweep-receipt.yml, for a workflow_run and for a dispatch alike."""
    from infx.reuse.issuer import names_run
    from tests.actions.harness import load

    name = load("sweep-receipt.yml")["run-name"]
    expression = "${{ github.event.workflow_run.id || inputs.run-id }}"
    assert name.startswith(f"seal run {expression} (")
    title = name.replace(expression, str(RUN))
    assert names_run(title.split("$")[0] + "by hand)", RUN)
    assert not names_run(title.split("$")[0] + "by hand)", RUN + 1)
    assert not names_run(f"seal run {RUN}0 (pull_request)", RUN) and not names_run(None, RUN)
