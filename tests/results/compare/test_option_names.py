"""One name per concept in `compare`, `changes` and `backfill`: the sweep workflow is
`--workflow-id`, as in the sweep commands (the old `--workflow` still works, unseen), and
`--branch` defaults to `main-branch` in infx.toml, as everywhere else."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from click.testing import CliRunner, Result

from infx.cli import cli
from infx.history import open_history
from infx.results.ingest.process import document
from tests.history.artifacts import zipped_table
from tests.history.tables import curve, table
from tests.results.compare.test_compare import point
from tests.results.compare.test_compare_api import zipped
from tests.results.verdict.test_changes import git, history

ROWS = [point(c, tput=1000, tpot_ms=20) for c in (4, 8)]


def sweep_run(
    api, run_id: int, blob: bytes, *, branch: str = "main", workflow: str = "run-sweep.yml"
) -> None:
    """A successful push run of `workflow` on `branch` whose results_bmk is `blob`."""
    api.state.add_run(
        run_id,
        head_sha=f"{run_id:040x}",
        minute=run_id - 5000,
        branch=branch,
        event="push",
        path=f".github/workflows/{workflow}",
        artifacts=["results_bmk"],
    )
    api.state.blobs[run_id * 100] = blob


def run(*args: str) -> Result:
    return CliRunner().invoke(cli, ["results", *args])


def compare(tmp_path: Path, *args: str) -> Result:
    current = tmp_path / "results.json"
    current.write_text(json.dumps(document([point(c, tput=1100, tpot_ms=20) for c in (4, 8)])))
    return run("compare", str(current), "--history-runs", "1", *args)


@pytest.fixture
def trunk(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A repository folder (no git: settings come from the current folder) whose main
    branch is called trunk."""
    (tmp_path / "infx.toml").write_text('main-branch = "trunk"\n')
    monkeypatch.chdir(tmp_path)
    return tmp_path


@pytest.mark.parametrize("command", ["compare", "changes", "backfill"])
def test_the_workflow_is_workflow_id_and_the_branch_default_is_said(command: str) -> None:
    shown = run(command, "--help").output
    assert "--workflow-id" in shown and "--workflow " not in shown
    assert "Default: main-branch in infx.toml, else main." in " ".join(shown.split())


@pytest.mark.parametrize("flag", ["--workflow-id", "--workflow"])
def test_compare_reads_the_named_workflows_runs(api, tmp_path: Path, flag: str) -> None:
    sweep_run(api, 5000, zipped(ROWS), workflow="nightly.yml")
    sweep_run(api, 5001, zipped([point(c, tput=500, tpot_ms=20) for c in (4, 8)]))
    outcome = compare(tmp_path, flag, "nightly.yml")
    assert outcome.exit_code == 0, outcome.output
    assert "newest [5000]" in outcome.stdout and "newest [5001]" not in outcome.stdout


def test_compare_reads_the_main_branch_of_the_settings(api, trunk: Path) -> None:
    sweep_run(api, 5000, zipped(ROWS), branch="trunk")
    sweep_run(api, 5001, zipped(ROWS), branch="main")
    outcome = compare(trunk)
    assert outcome.exit_code == 0, outcome.output
    assert "newest [5000]" in outcome.stdout
    assert "1 successful trunk run(s) read through the API" in outcome.stdout
    assert any("branch=trunk" in path for _, path in api.state.requests)
    assert not any("branch=main" in path for _, path in api.state.requests)
    assert "newest [5001]" in compare(trunk, "--branch", "main").stdout  # the option still wins


def _main_history(api, branch: str, workflow: str = "run-sweep.yml") -> Path:
    """Main's history of 12 runs through the API, the newest stepped; its table is --current.
    The runs' commits are unknown to the API's repository: no commit list."""
    empty = Path("empty.git").resolve()
    git(empty.parent, "init", "-q", "--bare", str(empty))
    api.state.git_remote = str(empty)
    docs = history()
    for i, doc in enumerate(docs[:-1]):
        sweep_run(api, 1000 + i, zipped(doc["rows"]), branch=branch, workflow=workflow)
    current = Path("current.json").resolve()
    current.write_text(json.dumps(docs[-1]))
    return current


def changes(current: Path, *args: str) -> Result:
    return run("changes", "--current", str(current), "--no-issue", "--format", "json", *args)


@pytest.mark.parametrize("flag", ["--workflow-id", "--workflow"])
def test_changes_reads_the_named_workflows_runs(
    api, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, flag: str
) -> None:
    monkeypatch.chdir(tmp_path)
    current = _main_history(api, "main", workflow="nightly.yml")
    outcome = changes(current, flag, "nightly.yml")
    assert outcome.exit_code == 0, outcome.output
    assert json.loads(outcome.stdout), "main's history was read: the step is found"
    assert json.loads(changes(current).stdout) == []  # run-sweep.yml has no runs


def test_changes_reads_the_main_branch_of_the_settings(api, trunk: Path) -> None:
    current = _main_history(api, "trunk")
    outcome = changes(current)
    assert outcome.exit_code == 0, outcome.output
    steps = json.loads(outcome.stdout)
    assert steps and {s["first_changed"]["id"] for s in steps} == {1011}
    assert json.loads(changes(current, "--branch", "main").stdout) == []


def _backfill(trunk: Path, *args: str) -> list[dict]:
    url = f"sqlite:///{trunk / 'history.sqlite'}"
    outcome = run("backfill", "--runs", "5", "--history", url, *args)
    assert outcome.exit_code == 0, outcome.output
    with open_history(url) as stored:
        return stored.main_runs(limit=10)


@pytest.mark.parametrize("flag", ["--workflow-id", "--workflow"])
def test_backfill_reads_the_named_workflows_runs(api, trunk: Path, flag: str) -> None:
    sweep_run(api, 5000, zipped_table(table(5000, curve(1000))), branch="trunk")
    sweep_run(
        api, 5001, zipped_table(table(5001, curve(1001))), branch="trunk", workflow="nightly.yml"
    )
    assert [d["run"]["id"] for d in _backfill(trunk, flag, "nightly.yml")] == [5001]


def test_backfill_reads_the_main_branch_of_the_settings(api, trunk: Path) -> None:
    sweep_run(api, 5000, zipped_table(table(5000, curve(1000))), branch="trunk")
    sweep_run(api, 5001, zipped_table(table(5001, curve(1001))), branch="main")
    (stored,) = _backfill(trunk)
    assert stored["run"]["id"] == 5000 and stored["run"]["ref"] == "refs/heads/trunk"
