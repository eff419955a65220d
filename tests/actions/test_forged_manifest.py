"""The forged-manifest attack end to end, through the real workflow files (issue 25,
provenance 1): a same-repository PR pushes commit A whose run-sweep.yml uploads a results
table of its choosing plus the manifest an honest sweep of the final head would write, then
commit B restoring the file. `/reuse-sweep-run <run of A>` is refused (a -1 and a "not
ready" status naming the workflow file), and the push of the merge publishes nothing of it:
no republish, the sweep runs instead. The same for a rerun dispatched on the PR branch at
A, and, in infx's own repository, for a PR whose commit A edits infx/*.py."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.actions.harness import World, comment_payload, push_payload, simulate
from tests.github.fake_api import FakeGitHub
from tests.github.scenario import Green, green_pr
from tests.reuse.test_forged import (
    FORGED,
    FORGED_TABLE,
    HONEST,
    INFX_FILES,
    TEMPLATE,
    TEMPLATE_TEXT,
    WORKFLOW,
    attack,
    forged_run,
    rerun,
    with_workflows,
)


def ask(api: FakeGitHub, body: str) -> dict:
    api.state.comments[:] = [c for c in api.state.comments if "/" not in c["body"]]
    return api.state.add_comment(7, "maintainer", body, 150)


def reuse_comment(api: FakeGitHub, pr: Green, tmp_path: Path, body: str) -> tuple[str, dict]:
    """`body` as a maintainer's comment, through reuse-sweep-run.yml: the reaction and the
    PR head's infx/reuse status."""
    comment = ask(api, body)
    world = World(pr.at_main().path, tmp_path / "comment", api.url, api.state.requests)
    world.tmp.mkdir(parents=True, exist_ok=True)
    run = simulate(world, "reuse-sweep-run.yml", "issue_comment", comment_payload(comment))
    assert run.ran("decide") and run.ran("react"), run.logs
    head = api.state.pulls[7]["head"]["sha"]
    return run.outputs["decide"]["reaction"], api.state.statuses[head][0]


def push_of_merge(api: FakeGitHub, pr: Green, tmp_path: Path):
    merged = pr.merge()
    world = World(pr.runner.path, tmp_path / "push", api.url, api.state.requests)
    world.tmp.mkdir(parents=True, exist_ok=True)
    return simulate(world, "run-sweep.yml", "push", push_payload(pr.before, merged))


def not_published(run, says: str) -> None:
    gate = run.outputs["reuse-gate"]
    assert gate["reuse-enabled"] == "false" and says in gate["reuse-reason"], run.logs
    assert run.jobs["republish"] == "skipped"
    for folder in run.artifacts.values():
        for member in folder.rglob("*.json"):
            assert member.read_text() != FORGED_TABLE, member
    assert run.ran("setup")  # the merge is swept instead


SAYS = "ran other code than what merges: .github/workflows/run-sweep.yml"


def test_a_forged_workflow_s_run_is_refused_by_the_comment_and_the_push(api, tmp_path) -> None:
    pr = green_pr(api.state)
    with_workflows(pr)
    sha_a, _, manifest = attack(pr, {WORKFLOW: FORGED}, {WORKFLOW: HONEST})
    forged_run(pr, 2000, sha_a, manifest)
    reaction, status = reuse_comment(api, pr, tmp_path, "/reuse-sweep-run 2000")
    assert reaction == "-1"
    assert status["state"] == "failure" and status["description"].startswith("not ready: run 2000")
    assert "ran other code than what merges" in status["description"]
    not_published(push_of_merge(api, pr, tmp_path), SAYS)


def test_a_rerun_dispatched_at_the_forged_commit_is_refused(api, tmp_path) -> None:
    pr = green_pr(api.state)
    with_workflows(pr)
    pr.record_run(1500, pr.branch.work.git("rev-parse", "HEAD"), 70)
    sha_a, _, manifest = attack(pr, {WORKFLOW: FORGED}, {WORKFLOW: HONEST})
    rerun(pr, 2000, sha_a, manifest, root=1500, source=1500)
    reaction, _ = reuse_comment(api, pr, tmp_path, "/use 2000")
    assert reaction == "-1"
    not_published(push_of_merge(api, pr, tmp_path), f"run 2000 {SAYS}")


def test_in_infx_s_own_repository_edited_infx_code_is_refused(api, tmp_path) -> None:
    pr = green_pr(api.state)
    pr.branch.on_main("infx itself", **{WORKFLOW: HONEST, TEMPLATE: TEMPLATE_TEXT, **INFX_FILES})
    pr.branch.merge_main()
    forged = "def collect(rows):\n    return [{'throughput': 1e9}]\n"
    original = INFX_FILES["infx__results__ingest__collect.py"]
    sha_a, _, manifest = attack(
        pr,
        {"infx__results__ingest__collect.py": forged},
        {"infx__results__ingest__collect.py": original},
    )
    forged_run(pr, 2000, sha_a, manifest)
    reaction, _ = reuse_comment(api, pr, tmp_path, "/reuse-sweep-run 2000")
    assert reaction == "-1"
    not_published(push_of_merge(api, pr, tmp_path), "infx/results/ingest/collect.py")


@pytest.mark.parametrize("pinned", [False, True])
def test_the_honest_run_of_the_final_head_is_still_reused(api, tmp_path, pinned) -> None:
    """The control: B's own run (honest workflow) publishes, pinned or found."""
    pr = green_pr(api.state)
    with_workflows(pr)
    _, sha_b, _ = attack(pr, {WORKFLOW: FORGED}, {WORKFLOW: HONEST})
    pr.record_run(2001, sha_b, 95)
    reaction, status = reuse_comment(
        api, pr, tmp_path, "/reuse-sweep-run 2001" if pinned else "/reuse-sweep-run"
    )
    assert reaction == "+1" and status["state"] == "success", status
    run = push_of_merge(api, pr, tmp_path)
    assert run.outputs["reuse-gate"]["reuse-source-run-id"] == "2001", run.logs["reuse-gate"]
    assert run.ran("republish") and run.jobs["setup"] == "skipped"
    assert json.loads((run.artifacts["sweep-manifest"] / "sweep-manifest.json").read_text())
