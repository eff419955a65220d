"""Run ids a sweep's commands take from GITHUB_RUN_ID or an option: ASCII digits below
SQLite's INTEGER bound, or one line and exit 2. int() crashed on junk (exit 3, a
traceback), read `٣` (Arabic-Indic three) as 3, and let 2**63 through to the history,
where SQLite raised OverflowError."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from click.testing import CliRunner

from infx.cli import cli
from tests.conftest import make_repo

JUNK = ["abc", "\u0663", str(2**63), "1_0", "+5"]


@pytest.mark.parametrize("value", JUNK)
def test_supersede_refuses_a_run_id_env_that_is_no_run_id(tmp_path: Path, value: str) -> None:
    payload = tmp_path / "event.json"
    payload.write_text(json.dumps({
        "action": "synchronize",
        "sender": {"login": "maintainer"},
        "pull_request": {"number": 17, "head": {"ref": "feature"}},
    }))  # fmt: skip
    env = {
        "GITHUB_EVENT_NAME": "pull_request",
        "GITHUB_EVENT_PATH": str(payload),
        "GITHUB_RUN_ID": value,
        "GITHUB_REPOSITORY": "acme/bench",
    }
    result = CliRunner().invoke(cli, ["sweep", "supersede"], env=env)
    assert result.exit_code == 2, result.output
    assert result.output == f"infx: error: GITHUB_RUN_ID must be a run id (digits), not {value!r}\n"


@pytest.mark.parametrize("value", JUNK)
def test_a_rerun_record_refuses_a_run_id_env_that_is_no_run_id(tmp_path: Path, value: str) -> None:
    repo = make_repo(tmp_path / "repo")
    record = tmp_path / "rerun.json"
    args = ("sweep", "plan", "--base", "base", "--rerun-record", str(record))
    result = repo.infx(*args, env={"GITHUB_RUN_ID": value})
    assert result.exit_code == 2, result.output
    assert f"infx: error: GITHUB_RUN_ID must be a run id (digits), not {value!r}" in result.stderr
    assert not record.exists()


def test_an_approval_check_refuses_a_run_id_past_the_history(tmp_path: Path) -> None:
    """The pattern took up to 20 digits: 2**63 and beyond went to the API as a run."""
    estimate = tmp_path / "estimate.json"
    estimate.write_text(json.dumps({"format": "infx-sweep-estimate/1", "over-budget": True}))
    args = ["sweep", "status", "--estimate", str(estimate), "--sha", "a" * 40, "--approved"]
    for run in (str(2**63), "9" * 20, "\u0663", "0", "042"):
        result = CliRunner().invoke(cli, [*args, "--run-id", run], env={"GITHUB_REPOSITORY": "a/b"})
        assert result.exit_code == 2, result.output
        assert (
            result.output
            == "infx: error: --approved checks this run's approval: --run-id names no run\n"
        )


@pytest.mark.parametrize(
    "args",
    [
        ["results", "ingest", "table.json", "--run", str(2**63)],
        ["results", "ingest", "table.json", "--run", "\u0663"],
        ["results", "compare", "table.json", "--baseline-run", "-1"],
        ["results", "compare", "table.json", "--baseline-run", str(2**63)],
        ["receipt", "fetch", "--run", str(2**63), "--out", "r.json"],
        ["receipt", "issue", "--run", "1", "--attempt", str(2**63), "--out", "r.json"],
        ["sweep", "priority", "table.json", "--at", "HEAD", "--run-id", str(2**63)],
    ],
)
def test_a_run_option_past_the_history_or_in_other_digits_is_a_usage_error(
    tmp_path: Path, args: list[str]
) -> None:
    """These options had no upper bound (or none at all: --baseline-run took -1), and int()
    took `٣`; a run id the history cannot hold is refused where it is given."""
    (tmp_path / "table.json").write_text("{}")
    args = [str(tmp_path / a) if a.endswith(".json") else a for a in args]
    result = CliRunner().invoke(cli, args, env={"GITHUB_RUN_ID": ""})
    assert result.exit_code == 2, result.output
    assert "is not a whole number from" in result.output and "below 2**63" in result.output
    assert "Traceback" not in result.output
