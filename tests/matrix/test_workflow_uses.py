"""What a workflow or action calls, read as YAML (issue 31, cases 3, 7, 8): the calls a line
regex missed, and each thing no record can hold named in one line."""

from __future__ import annotations

from pathlib import Path

import pytest

from infx.matrix.inputs import Snapshot, workflow_calls
from infx.matrix.workflow_uses import uses_of

ROOT = Path(__file__).resolve().parents[2]
SHA = "11bd71901bbe5b1630ceea73d27597364c9af683"


def test_calls_in_flow_mappings_and_through_aliases_are_found() -> None:
    text = f"""
x-steps: &install
  - {{uses: ./.github/actions/setup}}
  - uses: actions/checkout@{SHA}
jobs:
  a: {{uses: ./.github/workflows/tmpl.yml, with: {{x: 1}}}}
  b: &call
    uses: "$/.github/workflows/other.yml"
  c: *call
  d:
    runs-on: ubuntu-latest
    steps: *install
"""
    found = uses_of("w.yml", text.encode(), action=False)
    assert found.workflows == (".github/workflows/tmpl.yml", ".github/workflows/other.yml")
    assert found.actions == (".github/actions/setup",)
    assert found.remote == (f"actions/checkout@{SHA}",)
    assert found.unrecorded == ()


def test_a_local_action_named_by_a_path_ending_in_yml_is_a_workflow_only_at_job_level() -> None:
    found = uses_of("a.yml", b"runs: {using: composite, steps: [{uses: ./tools}]}", action=True)
    assert found.actions == ("tools",) and found.workflows == ()


@pytest.mark.parametrize(
    ("text", "says"),
    [
        ("jobs: {a: {uses: o/r/.github/workflows/t.yml@main}}", "o/r/.github/workflows/t.yml@main, a ref that can move"),
        ("jobs: {a: {steps: [{uses: o/act@v2}]}}", "o/act@v2, a ref that can move"),
        (f"jobs: {{a: {{steps: [{{uses: o/act@{SHA[:12]}}}]}}}}", "a ref that can move"),
        ("jobs: {a: {steps: [{uses: docker://alpine:3}]}}", "docker://alpine:3, an image tag"),
        ("jobs: {a: {steps: [{uses: o}]}}", "names no repository ref"),
        ("jobs: {a: {runs-on: '${{ vars.POOL }}'}}", "vars.POOL"),
        ("jobs: {a: {if: vars.ON == 'yes'}}", "vars.ON"),
        ("jobs: {a: {env: {X: '${{ vars[format(''A{0}'', 1)] }}'}}}", "vars.[...]"),
        ("jobs: [oops", "is not YAML"),
        ("- a\n- b\n", "is not a mapping"),
    ],
)  # fmt: skip
def test_what_no_record_holds_is_one_line_each(text, says) -> None:
    (line,) = uses_of("w.yml", text.encode(), action=False).unrecorded
    assert says in line and line.startswith("w.yml")


def test_a_docker_action_by_tag_is_unrecorded_and_by_digest_or_dockerfile_is_not() -> None:
    tag = uses_of("a.yml", b"runs: {using: docker, image: 'docker://x/y:1'}", action=True)
    assert "an image tag that can move" in tag.unrecorded[0]
    pinned = f"runs: {{using: docker, image: 'docker://x/y@sha256:{'a' * 64}'}}"
    assert uses_of("a.yml", pinned.encode(), action=True).unrecorded == ()
    assert uses_of("a.yml", b"runs: {using: docker, image: Dockerfile}", action=True) == uses_of(
        "a.yml", b"runs: {using: node20, main: index.js}", action=True
    )


def test_words_that_only_look_like_variables_are_not_variables() -> None:
    text = "jobs: {a: {steps: [{run: 'source ./vars.sh; echo ${{ env.vars }}'}]}}"
    assert uses_of("w.yml", text.encode(), action=False).unrecorded == ()


def test_this_repository_s_sweep_runs_nothing_unrecorded() -> None:
    snapshot = Snapshot.at(ROOT, None)
    for workflow in (".github/workflows/run-sweep.yml",):
        calls = workflow_calls(snapshot, workflow)
        assert calls.unrecorded == (), calls.unrecorded
        assert "action.yml" in calls.files
    assert (
        ".github/workflows/benchmark-tmpl.yml"
        in workflow_calls(snapshot, ".github/workflows/run-sweep.yml").files
    )
