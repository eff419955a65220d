"""What a maintainer reads before a rerun or a repeat says what the budget holds: the
lineage (what it was priced at before, plus this dispatch), not one dispatch's GPU-hours,
with this rerun's own share beside it (`sweep rerun`, `/rerun-failed`, `sweep repeat`)."""

from __future__ import annotations

import json
from dataclasses import replace
from pathlib import Path

import pytest
from click.testing import CliRunner

from infx.cli import cli
from infx.rerun.repeat import RepeatRequest, repeat_decision
from infx.rerun.rules import jobs_of, whole_plan
from tests.conftest import make_repo
from tests.github.fake_api import FakeGitHub
from tests.rerun.test_repeat import record as repeat_record
from tests.rerun.test_repeat import verdict_for
from tests.rerun.test_replays import (
    FLOORS,
    LOST,
    Sweep,
    plan_of,
    publish,
    record,
    rerun,
)


@pytest.fixture
def env(api: FakeGitHub) -> dict[str, str]:
    api.state.add_pull(17, head_sha="a" * 40, commits=["a" * 40], labels=["full-sweep-enabled"])
    return {"GITHUB_API_URL": api.url, "GITHUB_TOKEN": "t", "GITHUB_REPOSITORY": "acme/bench"}


@pytest.fixture
def checkout(tmp_path: Path) -> Path:
    repo = make_repo(tmp_path / "checkout")
    repo.commit("floors", **{"infx.toml": FLOORS})
    return repo.path


PREFIX = "The budget holds the lineage, not this dispatch: "


def failed_sweep(api: FakeGitHub, tmp_path: Path, spent: float | None, pr: int | None = 17) -> None:
    """A sweep of three 20-minute jobs on 8-GPU nodes (8 GPU-hours), one lost its runner."""
    rec = replace(record(), spent=spent, pr=pr)
    publish(
        api,
        tmp_path,
        Sweep(plan_of(concs=(4, 8)), rec, failed={1: ("failure", "Run the recipe", LOST)}),
    )


def test_sweep_rerun_names_the_lineage_the_budget_holds_and_this_rerun_s_share(
    api: FakeGitHub,
    env: dict[str, str],
    tmp_path: Path,
    checkout: Path,
) -> None:
    failed_sweep(api, tmp_path, 90.0)
    result = rerun(env, checkout)
    assert result.exit_code == 0, result.output
    assert "Rerunning 1 of 3 jobs: about 2.0 GPU-hours (a full rerun: 6.0)." in result.output
    # A PR's record is its code's word: what the planning job enforces is at least this.
    assert (
        PREFIX + "at least 92.0 GPU-hours (2.0 for this rerun on top of at least 90.0 its "
        "lineage was priced at); over its label's budget, the rerun waits for approval."
    ) in result.output


def test_a_pr_s_record_of_nothing_spent_shows_what_github_recorded_of_its_jobs(
    api: FakeGitHub,
    env: dict[str, str],
    tmp_path: Path,
    checkout: Path,
) -> None:
    failed_sweep(api, tmp_path, 0.0)
    result = rerun(env, checkout)
    assert result.exit_code == 0, result.output
    # Three jobs of 20 minutes on 8 GPUs: 8 GPU-hours held, whatever the record says.
    assert PREFIX + "at least 10.0 GPU-hours (2.0 for this rerun on top of at least 8.0" in (
        result.output
    )


def test_rerun_failed_s_reply_names_the_lineage_too(
    api: FakeGitHub,
    env: dict[str, str],
    tmp_path: Path,
) -> None:
    from tests.actions.harness import comment_payload

    failed_sweep(api, tmp_path, 90.0)
    api.state.permissions.update({"maintainer": "write"})
    comment = api.state.add_comment(17, "maintainer", f"/rerun-failed {4100}", 300)
    event = tmp_path / "event.json"
    event.write_text(json.dumps(comment_payload(comment, number=17)))
    outputs, summary = tmp_path / "outputs", tmp_path / "summary.md"
    outputs.write_text("")
    result = CliRunner().invoke(cli, ["rerun-failed", "--decide-only"], env={
        **env, "GITHUB_EVENT_NAME": "issue_comment", "GITHUB_EVENT_PATH": str(event),
        "GITHUB_OUTPUT": str(outputs), "GITHUB_STEP_SUMMARY": str(summary),
    })  # fmt: skip
    assert result.exit_code == 0, result.output
    assert PREFIX + "at least 92.0 GPU-hours (2.0 for this rerun" in summary.read_text()


def test_no_lineage_line_when_the_record_kept_no_figure(
    api: FakeGitHub,
    env: dict[str, str],
    tmp_path: Path,
    checkout: Path,
) -> None:
    """An older record without `spent`, of main's sweep: the rerun is priced on its own."""
    failed_sweep(api, tmp_path, None, pr=None)
    result = rerun(env, checkout)
    assert result.exit_code == 0, result.output
    assert "about 2.0 GPU-hours" in result.output and PREFIX not in result.output


def test_a_repeat_s_price_is_its_lineage_s() -> None:
    rows = [row for row, _ in jobs_of(whole_plan(plan_of(concs=(4, 8))))]
    verdict = {**verdict_for(rows[:1])}
    verdict["repeats"]["gpu_hours"] = 12.5
    asked = RepeatRequest(Path("v.json"), Path("rerun.json"), "17", "feature", "o/r", "5",
                          "run-sweep.yml", None)  # fmt: skip
    dispatch, said = repeat_decision(asked, verdict, replace(repeat_record(), spent=90.0), 2, "o/r")
    assert dispatch is not None, said
    assert "about 12.5 GPU-hours per repeat; the budget holds its lineage: at least 102.5 " in said
    assert "GPU-hours with it (90.0 before it)" in said
    _, paired = repeat_decision(asked, verdict, replace(repeat_record(), spent=90.0), 2, "o/r",
                                paired=True)  # fmt: skip
    assert (
        "about 25.0 GPU-hours per repeat with both halves; the budget holds its lineage: " in paired
    )
    assert "at least 115.0 GPU-hours with it (90.0 before it)" in paired
