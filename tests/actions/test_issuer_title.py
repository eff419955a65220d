"""Reuse finds a run's receipt among sweep-receipt.yml's runs by their title, the workflow's
run-name (`seal run <id> (<event>)`, GitHub's `display_title`): only GitHub's run id and
event name, or a dispatch's own run-id on main, go into it, and a dispatch whose run-id is
not the id as GitHub writes it seals nothing (its title would name no run)."""

from __future__ import annotations

from pathlib import Path

import pytest

from infx.reuse.issuer import names_run
from tests.actions.harness import World, load, simulate
from tests.conftest import make_repo
from tests.github.fake_api import FakeGitHub


def test_the_run_name_is_built_from_github_s_ids_and_the_dispatch_input_only() -> None:
    name = load("sweep-receipt.yml")["run-name"]
    assert name == (
        "seal run ${{ github.event.workflow_run.id || inputs.run-id }} "
        "(${{ github.event.workflow_run.event || 'by hand' }})"
    )


@pytest.mark.parametrize(
    "title",
    [
        "seal run 4242 (pull_request) and more",  # text after the title
        "seal run 04242 (by hand)",  # another spelling of the id
        "seal run 4242 (pull request)",
        "Seal run 4242 (push)",
        "seal run 4242 ",
    ],
)
def test_only_the_whole_title_as_the_issuer_writes_it_names_a_run(title: str) -> None:
    assert not names_run(title, 4242)
    assert names_run("seal run 4242 (pull_request)", 4242)
    assert names_run("seal run 4242 (by hand)", 4242)


@pytest.mark.parametrize("given", ["04242", "4242 (push)", " 4242"])
def test_a_dispatch_whose_run_id_is_not_github_s_spelling_seals_nothing(
    api: FakeGitHub, tmp_path: Path, given: str
) -> None:
    repo = make_repo(tmp_path / "repo")
    world = World(repo.path, tmp_path / "world", api.url, api.state.requests)
    (tmp_path / "world").mkdir()
    payload = {"ref": "refs/heads/main", "inputs": {"run-id": given},
               "repository": {"full_name": "acme/bench", "default_branch": "main"}}  # fmt: skip
    run = simulate(world, "sweep-receipt.yml", "workflow_dispatch", payload, run_id=4300)
    assert run.jobs["issue"] == "failure", run.log("issue")
    assert "run-id must be a run id as GitHub writes it" in run.log("issue")
    assert not run.artifacts
