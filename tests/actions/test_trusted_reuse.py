"""Issue 31's attacks end to end, through the real workflow files: each one's
`/reuse-sweep-run` gets a -1 and a "not ready" status from reuse-sweep-run.yml, and the push
of the merge publishes nothing of it (no republish; the merge is swept instead). The runs
are set up as tests/reuse set them up (a run of another base, a failed run, a rerun
dispatched on a branch, a composite action's forged script, a template called through a
flow mapping, a remote action at a tag, a variable), each sealed by the issuer."""

from __future__ import annotations

import pytest

from tests.actions.test_forged_manifest import not_published, push_of_merge, reuse_comment
from tests.github.scenario import RUN, Green, green_pr
from tests.reuse import test_issuer as other_base
from tests.reuse import test_workflow_inputs as inputs
from tests.reuse.test_forged import HONEST, WORKFLOW, attack, forged_run, rerun, with_workflows


def run_of_another_base(pr: Green) -> tuple[str, str]:
    with_workflows(pr)
    head = pr.state.pulls[7]["head"]["sha"] = pr.branch.work.git("rev-parse", "HEAD")
    pr.state.add_pull(8, head_sha=head, base="evil-base", commits=[head])
    merge = other_base.merged_into(pr, other_base.evil_base(pr), head)
    other_base.run_of_another_base(pr, 2000, "refs/pull/8/merge", merge)
    return "/use 2000", "run 2000 ran for refs/pull/8/merge, not PR #7's merge with main"


def failed_run(pr: Green) -> tuple[str, str]:
    pr.state.runs[-1]["conclusion"] = "failure"
    return f"/use {RUN}", f"run {RUN} concluded failure"


def rerun_on_a_branch(pr: Green) -> tuple[str, str]:
    with_workflows(pr)
    pr.branch.on_main("fix the sweep", **{WORKFLOW: HONEST + "# fixed\n"})
    head = pr.state.pulls[7]["head"]["sha"] = pr.branch.work.git("rev-parse", "HEAD")
    pr.record_run(1500, head, 70)
    pr.state.runs[-1]["conclusion"] = "failure"
    rerun(pr, 2000, head, pr.manifests[1500], root=1500, source=1500)
    return "/use 2000", f"ran other code than what merges: {WORKFLOW.replace('__', '/')} at its branch commit"  # fmt: skip


def composite_script(pr: Green) -> tuple[str, str]:
    script = ".github__actions__bench__run.sh"
    inputs.main_holds(pr, **{WORKFLOW: inputs.calls_action(".github/actions/bench"),
                             ".github__actions__bench__action.yml": inputs.COMPOSITE,
                             script: "bash recipes/x.sh\n"})  # fmt: skip
    sha_a, _, manifest = attack(pr, {script: "echo fake\n"}, {script: "bash recipes/x.sh\n"})
    forged_run(pr, 2000, sha_a, manifest)
    return "/use 2000", "ran other code than what merges: .github/actions/bench/run.sh"


def flow_mapping(pr: Green) -> tuple[str, str]:
    from tests.reuse.test_forged import TEMPLATE, TEMPLATE_TEXT

    inputs.main_holds(pr, **{WORKFLOW: inputs.FLOW_CALL})
    sha_a, _, manifest = attack(pr, {TEMPLATE: TEMPLATE_TEXT.replace("bash r.sh", "echo fake")},
                                {TEMPLATE: TEMPLATE_TEXT})  # fmt: skip
    forged_run(pr, 2000, sha_a, manifest)
    return "/use 2000", "ran other code than what merges: .github/workflows/benchmark-tmpl.yml"


def unrecorded(edit: tuple[str, str], says: str):
    def setup(pr: Green) -> tuple[str, str]:
        inputs.main_holds(pr, **{WORKFLOW: HONEST.replace(*edit)})
        pr.record_run(2000, pr.branch.work.git("rev-parse", "HEAD"), 70)
        return "/use 2000", says

    return setup


ATTACKS = {
    "1-another-base": run_of_another_base,
    "2-composite-script": composite_script,
    "3-flow-mapping": flow_mapping,
    "5-failed-run": failed_run,
    "6-rerun-on-a-branch": rerun_on_a_branch,
    "7-action-at-a-tag": unrecorded(
        (inputs.CHECKOUT, inputs.CHECKOUT + "      - uses: octo/setup-gpu@v2\n"),
        "octo/setup-gpu@v2, a ref that can move",
    ),
    "8-a-variable": unrecorded(
        ("    runs-on: ubuntu-latest\n", "    runs-on: ${{ vars.GPU_POOL }}\n"),
        "reads the variable vars.GPU_POOL",
    ),
}


@pytest.mark.parametrize("attack_case", ATTACKS.values(), ids=ATTACKS.keys())
def test_an_attack_is_refused_by_the_comment_and_the_push(api, tmp_path, attack_case) -> None:
    pr = green_pr(api.state)
    body, says = attack_case(pr)
    reaction, status = reuse_comment(api, pr, tmp_path, body)
    assert reaction == "-1", status
    assert status["state"] == "failure" and status["description"].startswith("not ready: ")
    not_published(push_of_merge(api, pr, tmp_path), says)
