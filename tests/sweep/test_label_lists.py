"""`infx workflows check`: the label names run-sweep.yml spells out follow infx.toml's
[labels], so a renamed label cannot leave a workflow condition that never matches."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from tests.conftest import GitRepo

ROOT = Path(__file__).resolve().parents[2]


def with_workflows(repo: GitRepo) -> GitRepo:
    shutil.copytree(ROOT / ".github", repo.path / ".github")
    repo.commit("workflows")
    return repo


def test_this_repositorys_workflows_match_the_default_labels(repo: GitRepo) -> None:
    result = with_workflows(repo).infx("workflows", "check")
    assert result.exit_code == 0, result.output
    assert "label lists match" in result.output


def test_a_renamed_label_names_each_workflow_line_that_still_spells_the_old_one(
    repo: GitRepo,
) -> None:
    with_workflows(repo)
    repo.commit("rename", **{"infx.toml": '[labels]\nsweep-enabled = "quick-sweep"\n'})
    result = repo.infx("workflows", "check")
    assert result.exit_code == 1, result.output
    lines = (repo.path / ".github/workflows/run-sweep.yml").read_text().splitlines()
    listed = [n for n, text in enumerate(lines, 1) if 'fromJSON(\'["sweep-enabled"' in text]
    tested = [n for n, text in enumerate(lines, 1) if "name, 'sweep-enabled')" in text]
    assert listed and tested
    for number in listed:
        assert (
            f".github/workflows/run-sweep.yml:{number}: label list lacks 'quick-sweep'"
            in result.output
        )
    for number in [*listed, *tested]:
        assert (
            f".github/workflows/run-sweep.yml:{number}: 'sweep-enabled' is renamed "
            "'quick-sweep' in infx.toml [labels]" in result.output
        )

    # The workflow edited as the message says: the check passes.
    run_sweep = repo.path / ".github/workflows/run-sweep.yml"
    text = run_sweep.read_text()
    run_sweep.write_text(
        text.replace("'sweep-enabled'", "'quick-sweep'").replace('"sweep-enabled"', '"quick-sweep"')
    )
    fixed = repo.infx("workflows", "check")
    assert fixed.exit_code == 0, fixed.output


def test_no_workflows_is_nothing_to_check(repo: GitRepo) -> None:
    result = repo.infx("workflows", "check")
    assert result.exit_code == 0 and "no workflow" in result.output


@pytest.mark.parametrize("pattern", ["/etc/*", "", "../**", "a/../../*.yml"])
def test_a_glob_outside_the_repository_is_a_usage_error(repo: GitRepo, pattern: str) -> None:
    """An absolute glob raised NotImplementedError and an empty one ValueError (exit 3);
    '../**' read every file beside the repository."""
    result = repo.infx("workflows", "check", "--workflows", pattern)
    assert result.exit_code == 2, result.output
    assert f"--workflows {pattern!r}: give a glob relative to the repository root" in result.output
