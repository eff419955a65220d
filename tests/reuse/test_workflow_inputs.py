"""Every file a job can execute is an input, or the run is refused in one line (issue 31,
cases 2, 3, 7 and 8). Each was a wrong "yes" of the reuse gate first: a forged script of a
composite action or a docker action's Dockerfile at commit A restored at B; a template
called through a flow mapping or an anchor, which a line regex never followed; a remote
action or reusable workflow at a moving ref; a repository variable whose value no file
holds."""

from __future__ import annotations

import pytest

from tests.github.scenario import Green, green_pr
from tests.reuse.test_forged import (
    HONEST,
    TEMPLATE,
    TEMPLATE_TEXT,
    WORKFLOW,
    ask,
    attack,
    forged_run,
    refused,
)

CHECKOUT = "      - uses: actions/checkout@11bd71901bbe5b1630ceea73d27597364c9af683\n"
COMPOSITE = "runs:\n  using: composite\n  steps:\n    - run: bash $GITHUB_ACTION_PATH/run.sh\n      shell: bash\n"  # fmt: skip
DOCKER = "runs: {using: docker, image: Dockerfile}\n"


def main_holds(pr: Green, **files: str) -> None:
    pr.branch.on_main("workflows", **{TEMPLATE: TEMPLATE_TEXT, **files})
    pr.branch.merge_main()


def calls_action(folder: str) -> str:
    return HONEST.replace(CHECKOUT, CHECKOUT + f"      - uses: ./{folder}\n")


def reused_after(pr: Green, forged: dict[str, str], honest: dict[str, str], says: str) -> None:
    """A edits `forged`, B restores `honest`; the run of A, pinned, is refused saying `says`."""
    sha_a, _, manifest = attack(pr, forged, honest)
    forged_run(pr, 2000, sha_a, manifest)
    ask(pr, "/use 2000")
    refused(pr, says)


# --- 2. a local action's scripts and a docker action's Dockerfile ---------------------------


def test_a_forged_script_of_a_composite_action_is_refused(api) -> None:
    pr = green_pr(api.state)
    script = ".github__actions__bench__run.sh"
    main_holds(pr, **{WORKFLOW: calls_action(".github/actions/bench"),
                      ".github__actions__bench__action.yml": COMPOSITE,
                      script: "bash recipes/x.sh\n"})  # fmt: skip
    reused_after(
        pr,
        {script: "echo '{\"throughput\": 1e9}' > results.json\n"},
        {script: "bash recipes/x.sh\n"},
        "ran other code than what merges: .github/actions/bench/run.sh",
    )


def test_a_forged_dockerfile_of_a_docker_action_is_refused(api) -> None:
    pr = green_pr(api.state)
    dockerfile = ".github__actions__box__Dockerfile"
    main_holds(pr, **{WORKFLOW: calls_action(".github/actions/box"),
                      ".github__actions__box__action.yml": DOCKER,
                      dockerfile: "FROM alpine@sha256:" + "1" * 64 + "\n"})  # fmt: skip
    reused_after(
        pr,
        {dockerfile: "FROM evil/numbers:latest\n"},
        {dockerfile: "FROM alpine@sha256:" + "1" * 64 + "\n"},
        "ran other code than what merges: .github/actions/box/Dockerfile",
    )


# --- 3. calls a line regex never saw ---------------------------------------------------------

FLOW_CALL = HONEST.replace(
    "  single:\n    needs: setup\n    uses: ./.github/workflows/benchmark-tmpl.yml\n",
    "  single: {needs: setup, uses: ./.github/workflows/benchmark-tmpl.yml}\n",
)
ANCHORED = HONEST.replace(
    "  single:\n    needs: setup\n    uses: ./.github/workflows/benchmark-tmpl.yml\n",
    "  single: &bench {needs: setup, uses: ./.github/workflows/benchmark-tmpl.yml}\n"
    "  multi: *bench\n",
)


@pytest.mark.parametrize("caller", [FLOW_CALL, ANCHORED], ids=["flow-mapping", "anchor"])
def test_a_template_called_through_a_flow_mapping_or_an_anchor_is_followed(api, caller) -> None:
    assert "uses: ./.github/workflows/benchmark-tmpl.yml\n" not in caller
    pr = green_pr(api.state)
    main_holds(pr, **{WORKFLOW: caller})
    manifest = pr.record_run(1999, pr.branch.work.git("rev-parse", "HEAD"), 70)
    assert ".github/workflows/benchmark-tmpl.yml" in manifest["measured"]["files"]
    evil = TEMPLATE_TEXT.replace("bash r.sh", "echo fake")
    reused_after(
        pr,
        {TEMPLATE: evil},
        {TEMPLATE: TEMPLATE_TEXT},
        "ran other code than what merges: .github/workflows/benchmark-tmpl.yml",
    )


# --- 7. remote refs that move; 8. repository variables ---------------------------------------


@pytest.mark.parametrize(
    ("edit", "says"),
    [
        (
            ("  single:\n    needs: setup\n    uses: ./.github/workflows/benchmark-tmpl.yml\n",
             "  single:\n    needs: setup\n    uses: octo/bench/.github/workflows/tmpl.yml@main\n"),
            "job single uses octo/bench/.github/workflows/tmpl.yml@main, a ref that can move; "
            "pin it to a full commit SHA",
        ),
        (
            (CHECKOUT, CHECKOUT + "      - uses: octo/setup-gpu@v2\n"),
            "job setup step 2 uses octo/setup-gpu@v2, a ref that can move",
        ),
        (
            (CHECKOUT, CHECKOUT + "      - uses: docker://evil/numbers:latest\n"),
            "uses docker://evil/numbers:latest, an image tag that can move",
        ),
        (
            ("    runs-on: ubuntu-latest\n", "    runs-on: ${{ vars.GPU_POOL }}\n"),
            "reads the variable vars.GPU_POOL",
        ),
    ],
    ids=["reusable-workflow-at-main", "action-at-tag", "image-by-tag", "variable"],
)  # fmt: skip
def test_what_no_record_holds_refuses_the_run_in_one_line(api, edit, says) -> None:
    pr = green_pr(api.state)
    main_holds(pr, **{WORKFLOW: HONEST.replace(*edit)})
    manifest = pr.record_run(2000, pr.branch.work.git("rev-parse", "HEAD"), 70)
    assert manifest["sweep"]["reusable"] is False
    assert says in manifest["sweep"]["unrecorded"][0]
    ask(pr, "/use 2000")
    out = refused(pr, says)
    assert "\n" not in out["reuse-reason"]


def test_remote_refs_pinned_by_commit_and_images_by_digest_are_reused(api) -> None:
    """The control: the same calls pinned are recorded by the workflow's bytes."""
    pr = green_pr(api.state)
    pinned = HONEST.replace(
        CHECKOUT,
        CHECKOUT
        + f"      - uses: octo/setup-gpu@{'c' * 40}\n"
        + f"      - uses: docker://alpine@sha256:{'d' * 64}\n",
    )
    main_holds(pr, **{WORKFLOW: pinned})
    pr.record_run(2000, pr.branch.work.git("rev-parse", "HEAD"), 70)
    ask(pr, "/use 2000")
    _, out = pr.gate()
    assert out["reuse-enabled"] == "true", out["reuse-reason"]
