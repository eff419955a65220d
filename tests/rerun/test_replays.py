"""Failed sweeps the issue's own tests do not replay, published in the fake API as GitHub
keeps them (the run, its sweep-plan and results_bmk artifacts, its jobs and log tails), and
decided by `infx sweep rerun` and `/rerun-failed` as a maintainer would run them. Each
case is a way GPU time could be spent wrongly or a failed point never run again."""

from __future__ import annotations

import json
import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

from infx.cli import cli
from infx.errors import UsageError
from infx.matrix.options import PlanOptions
from infx.rerun.rules import jobs_of
from infx.results.ingest.collect import merge
from infx.sweep.record import RunRecord
from tests.conftest import make_repo
from tests.github.fake_api import FakeGitHub, stamp
from tests.github.scenario import zip_files as zip_bytes
from tests.rerun.test_rules import measured, plan_of

RUN = 4100
FLOORS = "[accuracy-floors]\ndefault = { gsm8k = 0.9 }\n"


@dataclass
class Sweep:
    """A finished sweep: its plan, which jobs passed, failed or never ran, and what it left."""

    plan: dict[str, Any]
    record: RunRecord
    # position in jobs_of(plan) -> (conclusion, failing step, log tail); absent: success
    failed: dict[int, tuple[str, str | None, str | None]] = field(default_factory=dict)
    scores: dict[int, float] = field(default_factory=dict)  # eval position -> its score
    never_ran: set[int] = field(default_factory=set)  # skipped after a failed canary
    empty: set[int] = field(default_factory=set)  # passed, uploaded no result
    minutes: dict[int, float] = field(default_factory=dict)  # how long a job ran; else 20


def job_name(plan: dict[str, Any], position: int) -> str:
    """The name GitHub gives the benchmark job of a plan position."""
    from infx.matrix.rows import chunk_rows

    row, _ = jobs_of(plan)[position]
    for bucket in ("canary", "single", "evals"):
        try:
            rows = chunk_rows(plan, bucket, 0)
        except UsageError:
            continue
        for index, candidate in enumerate(rows):
            if candidate is row:
                return f"{bucket} (0) / {bucket}/0/{index} {row['exp-name']}"
    raise AssertionError(f"no job for position {position}")


def publish(
    api: FakeGitHub, tmp_path: Path, sweep: Sweep, run_id: int = RUN, head_repo: str = "acme/bench"
) -> None:
    jobs, docs = [], []
    for position, (row, _) in enumerate(jobs_of(sweep.plan)):
        if position in sweep.never_ran:
            continue
        conclusion, step, log = sweep.failed.get(position, ("success", None, None))
        job_id = run_id * 100 + position
        steps = [{"number": 1, "name": "Set up job", "status": "completed",
                  "conclusion": "success"}]  # fmt: skip
        if step:
            steps.append({"number": 2, "name": step, "status": "completed",
                          "conclusion": "failure"})  # fmt: skip
        jobs.append({
            "id": job_id, "run_id": run_id, "run_attempt": 1,
            "name": job_name(sweep.plan, position), "status": "completed",
            "conclusion": conclusion, "started_at": stamp(1),
            "completed_at": stamp(1 + sweep.minutes.get(position, 20)),
            "runner_name": f"mi355x-amds_0{position % 8}", "labels": ["mi355x"], "steps": steps,
        })  # fmt: skip
        if log is not None:
            api.state.logs[job_id] = log.encode()
        if position in sweep.empty:
            pass
        elif conclusion == "success" or step == "Check accuracy floors":
            docs.append((f"job{position}", measured(tmp_path, row,
                                                    score=sweep.scores.get(position, 0.95))))  # fmt: skip
    api.state.add_run(run_id, head_sha="a" * 40, minute=60, conclusion="failure",
                      artifacts=["sweep-plan", "results_bmk"], head_repo=head_repo)  # fmt: skip
    record = {**sweep.record.as_json(), "run_id": run_id, "root": run_id}
    api.state.blobs[run_id * 100] = zip_bytes({
        "sweep.json": json.dumps(sweep.plan).encode(),
        "rerun.json": json.dumps(record).encode(),
    })  # fmt: skip
    table = merge(docs) if docs else {"format": "infx-results/1", "rows": []}
    api.state.blobs[run_id * 100 + 1] = zip_bytes({"results.json": json.dumps(table).encode()})
    api.state.jobs[run_id] = jobs


def record(canary: bool = False, fail_fast: bool = False) -> RunRecord:
    return RunRecord(RUN, "pull_request", "a" * 40, 17, "full-sweep-enabled", PlanOptions(),
                     canary, fail_fast, False, RUN)  # fmt: skip


@pytest.fixture
def env(api: FakeGitHub, tmp_path: Path) -> dict[str, str]:
    api.state.add_pull(17, head_sha="a" * 40, commits=["a" * 40], labels=["full-sweep-enabled"])
    return {"GITHUB_API_URL": api.url, "GITHUB_TOKEN": "t", "GITHUB_REPOSITORY": "acme/bench"}


@pytest.fixture
def checkout(tmp_path: Path) -> Path:
    """The default branch a maintainer runs infx in, with accuracy floors in its settings."""
    repo = make_repo(tmp_path / "checkout")
    repo.commit("floors", **{"infx.toml": FLOORS})
    return repo.path


def rerun(env: dict[str, str], cwd: Path, *args: str):
    old = Path.cwd()
    os.chdir(cwd)
    try:
        return CliRunner().invoke(cli, ["sweep", "rerun", str(RUN), "--dry-run", *args], env=env)
    finally:
        os.chdir(old)


@pytest.mark.parametrize("where", ["checkout", "elsewhere"])
def test_an_eval_below_its_floor_is_rerun_not_nothing_to_rerun(
    api: FakeGitHub, env: dict[str, str], tmp_path: Path, checkout: Path, where: str
) -> None:
    """The eval job uploaded its result, then failed its floor check: the results table
    holds a score, but not a valid one. Outside a checkout with floors, the failed floor
    check of the job says so."""
    plan = plan_of(concs=(4, 8))
    below = "infx: error: llama70b gsm8k exact_match,strict-match 0.5000 is below its floor 0.9"
    sweep = Sweep(plan, record(), failed={2: ("failure", "Check accuracy floors", below)},
                  scores={2: 0.5})  # fmt: skip
    publish(api, tmp_path, sweep)
    outside = tmp_path / "elsewhere"
    outside.mkdir()
    result = rerun(env, checkout if where == "checkout" else outside)
    assert result.exit_code == 0, result.output
    assert "Rerunning 1 of 3 jobs" in result.output
    assert "| llama70b\\_8k1k | 32 | mi355x | accuracy-floor on" in result.output


def canary_plan() -> dict[str, Any]:
    from infx.matrix.plan import canary

    first, remaining = canary(plan_of(concs=(4, 8, 16)))
    return {"canary": [first], "remaining": remaining}


LOST = "##[error]The self-hosted runner: mi355x-amds_00 lost communication with the server."
RECIPE = (
    "ValueError: unrecognized arguments: --enable-foo\n##[error]Process completed with exit code 1."
)


@pytest.mark.parametrize(
    ("scope", "log", "expected"),
    [
        ("missing", RECIPE, "Rerunning 4 of 4 jobs"),
        ("missing", LOST, "Rerunning 4 of 4 jobs"),
        ("infra", LOST, "Rerunning 4 of 4 jobs"),  # the canary's runner went: all of it
        ("infra", RECIPE, "nothing to rerun"),  # a broken recipe is left to a person
    ],
)
def test_a_failed_canary_that_stopped_everything_reruns_everything_canary_first(
    api: FakeGitHub, env: dict[str, str], tmp_path: Path, checkout: Path, scope, log, expected
) -> None:
    plan = canary_plan()
    sweep = Sweep(plan, record(canary=True), failed={0: ("failure", "Run the recipe", log)},
                  never_ran={1, 2, 3})  # fmt: skip
    publish(api, tmp_path, sweep)
    result = rerun(env, checkout, "--scope", scope)
    assert result.exit_code == 0, result.output
    assert expected in result.output
    if expected.startswith("Rerunning"):
        table = [line for line in result.output.splitlines() if line.startswith("| llama")]
        assert "canary, first" in table[0] and "| 4 |" in table[0]
        assert sorted(line.split("|")[2].strip() for line in table) == ["16", "32", "4", "8"]


def test_a_job_that_passed_without_a_result_runs_again(
    api: FakeGitHub, env: dict[str, str], tmp_path: Path, checkout: Path
) -> None:
    sweep = Sweep(plan_of(concs=(4, 8, 16)), record(), empty={1})
    publish(api, tmp_path, sweep)
    result = rerun(env, checkout)
    assert result.exit_code == 0, result.output
    assert "Rerunning 1 of 4 jobs" in result.output
    assert "| llama70b\\_1k1k | 8 | mi355x | no valid result |" in result.output


def triage(env: dict[str, str], tmp_path: Path, sweep: Sweep, *extra: str):
    """`infx sweep triage` as the collect job runs it, with the run's job result folders."""
    plan_dir = tmp_path / "sweep-plan"
    plan_dir.mkdir()
    (plan_dir / "sweep.json").write_text(json.dumps(sweep.plan))
    record = {**sweep.record.as_json(), "run_id": RUN, "root": RUN}
    (plan_dir / "rerun.json").write_text(json.dumps(record))
    out = tmp_path / "sweep-jobs"
    result = CliRunner().invoke(
        cli,
        ["sweep", "triage", "--plan", str(plan_dir), "--out-dir", str(out), "--run-id", str(RUN),
         *extra],
        env=env,
    )  # fmt: skip
    return result, out


def test_a_job_that_passed_without_a_result_is_no_duration_sample(
    api: FakeGitHub, env: dict[str, str], tmp_path: Path
) -> None:
    """A recipe that exits 0 without benchmarking finishes early: its minutes would make the
    next estimate of that identity far too low, and a large sweep pass its budget."""
    from infx.matrix.cost import job_key
    from infx.results.ingest.files import write_json
    from infx.results.ingest.process import RESULT_FILE

    sweep = Sweep(plan_of(concs=(4, 8), evals=False), record(), empty={1})
    publish(api, tmp_path, sweep)
    rows = [row for row, _ in jobs_of(sweep.plan)]
    results = tmp_path / "results_bmk"
    write_json(results / "bmk_single_llama70b_1k1k_0_0" / RESULT_FILE, measured(tmp_path, rows[0]))
    (results / "bmk_single_llama70b_1k1k_0_1").mkdir()  # the upload found no file
    result, out = triage(env, tmp_path, sweep, "--results", str(results))
    assert result.exit_code == 0, result.output
    timings = json.loads((out / "timings.json").read_text())["jobs"]
    assert set(timings) == {job_key(rows[0])}


@pytest.mark.parametrize(
    ("text", "message"),
    [("{", "is not JSON"), ('{"format": "infx-sweep-manifest/1"}', "is not a sweep manifest")],
)
def test_a_source_manifest_that_is_not_one_is_a_clear_error(
    api: FakeGitHub, env: dict[str, str], tmp_path: Path, checkout: Path, text: str, message: str
) -> None:
    """The source's sweep-manifest artifact (an older infx's, or a broken upload) stops the
    rerun's planning job with one line, not a crash."""
    sweep = Sweep(plan_of(concs=(4,)), record())
    publish(api, tmp_path, sweep)
    source = tmp_path / "source" / "sweep-plan"
    source.mkdir(parents=True)
    (source / "sweep.json").write_text(json.dumps(sweep.plan))
    (source / "rerun.json").write_text(json.dumps({**sweep.record.as_json(), "run_id": RUN,
                                                   "root": RUN}))  # fmt: skip
    manifest = tmp_path / "sweep-manifest.json"
    manifest.write_text(text)
    old = Path.cwd()
    os.chdir(checkout)
    try:
        result = CliRunner().invoke(cli, [
            "sweep", "rerun-plan", "--source-run", str(RUN), "--source-dir",
            str(tmp_path / "source"), "--manifest", str(manifest), "--output-dir",
            str(tmp_path / "out"), "--pr", "17", "--run-id", "4200", "--ref-name", "feature",
        ], env=env)  # fmt: skip
    finally:
        os.chdir(old)
    assert result.exit_code == 2, result.output
    assert message in result.stderr and not (tmp_path / "out").exists()


@pytest.mark.parametrize(
    ("labels", "draft", "refused"),
    [
        (["full-sweep-enabled"], False, None),
        ([], False, "no longer carries its sweep label full-sweep-enabled"),
        (["full-sweep-enabled"], True, "is a draft"),
    ],
)
def test_the_automatic_retry_needs_a_pr_that_still_asks_for_its_sweep(
    api: FakeGitHub, tmp_path: Path, checkout: Path, labels, draft, refused
) -> None:
    """A maintainer who removed the sweep label, or turned the PR back into a draft, after
    a sweep failed has said to stop: its infra failures are not retried on GPUs."""
    api.state.add_pull(17, head_sha="a" * 40, commits=["a" * 40], labels=labels)
    api.state.pulls[17]["draft"] = draft
    env = {"GITHUB_API_URL": api.url, "GITHUB_TOKEN": "t", "GITHUB_REPOSITORY": "acme/bench"}
    sweep = Sweep(plan_of(concs=(4, 8)), record(), failed={1: ("failure", "Run the recipe", LOST)})
    publish(api, tmp_path, sweep)
    result = rerun(env, checkout, "--scope", "infra", "--automatic")
    if refused is None:
        assert result.exit_code == 0 and "Rerunning 1 of 3 jobs" in result.output, result.output
    else:
        assert result.exit_code == 1 and refused in result.output + result.stderr, result.output


TIMED_OUT = (
    "##[error]The job running on runner mi355x-amds_02 has exceeded the maximum execution "
    "time of 360 minutes.\n##[error]The operation was canceled.\n"
)


def test_a_job_cancelled_by_its_timeout_is_no_fail_fast_collateral(
    api: FakeGitHub, env: dict[str, str], tmp_path: Path, checkout: Path
) -> None:
    """GitHub reports a job that ran past its timeout-minutes as cancelled. Taken for a job
    fail-fast cancelled, the automatic infra retry would run its six hours again."""
    sweep = Sweep(
        plan_of(concs=(4, 8)),
        record(),
        failed={0: ("failure", "Run the recipe", LOST), 1: ("cancelled", None, TIMED_OUT)},
        minutes={1: 360},
    )
    publish(api, tmp_path, sweep)
    result = rerun(env, checkout, "--scope", "infra")
    assert result.exit_code == 0, result.output
    assert "Rerunning 1 of 3 jobs" in result.output
    assert "| llama70b\\_1k1k | 4 | mi355x | runner-lost on" in result.output


@pytest.mark.parametrize(
    ("change", "login", "message"),
    [
        ({"state": "closed"}, "maintainer", "PR #17 is closed"),
        (
            {"head": {"ref": "feature", "sha": "a" * 40, "repo": {"full_name": "someone/bench"}}},
            "maintainer",
            "comes from a fork",
        ),
        ({}, "triager", "triager lacks write, maintain or admin permission"),
        ({}, "maintainer", None),
    ],
)
def test_rerun_failed_comment_refusals(
    api: FakeGitHub, env: dict[str, str], tmp_path: Path, change, login, message
) -> None:
    from tests.actions.harness import comment_payload

    sweep = Sweep(plan_of(concs=(4, 8)), record(), failed={1: ("failure", "Run the recipe", LOST)})
    publish(api, tmp_path, sweep)
    api.state.pulls[17].update(change)
    api.state.permissions.update({"maintainer": "write", "triager": "read"})
    comment = api.state.add_comment(17, login, f"/rerun-failed {RUN}", 300)
    event = tmp_path / "event.json"
    event.write_text(json.dumps(comment_payload(comment, number=17)))
    outputs = tmp_path / "outputs"
    outputs.write_text("")
    result = CliRunner().invoke(
        cli,
        ["rerun-failed", "--decide-only"],
        env={
            **env,
            "GITHUB_EVENT_NAME": "issue_comment",
            "GITHUB_EVENT_PATH": str(event),
            "GITHUB_OUTPUT": str(outputs),
        },
    )
    assert result.exit_code == 0, result.output
    written = outputs.read_text()
    if message is None:
        assert "\n+1\n" in written
        assert '"rerun-of": "4100"' in written
    else:
        assert message in result.output
        assert "\n-1\n" in written and "rerun-of" not in written
    assert api.state.workflow_dispatches == []


@pytest.mark.parametrize("digits", [21, 4301])
def test_a_rerun_failed_run_id_past_20_digits_is_a_usage_refusal(
    api: FakeGitHub, env: dict[str, str], tmp_path: Path, digits: int
) -> None:
    """The run id is ASCII digits, at most 20, as for /reuse-sweep-run and /stage-results:
    `int()` refuses past 4,300 digits, and one such comment crashed the decision."""
    from tests.actions.harness import comment_payload

    sweep = Sweep(plan_of(concs=(4, 8)), record(), failed={1: ("failure", "Run the recipe", LOST)})
    publish(api, tmp_path, sweep)
    api.state.permissions["maintainer"] = "write"
    comment = api.state.add_comment(17, "maintainer", "/rerun-failed " + "9" * digits, 300)
    event = tmp_path / "event.json"
    event.write_text(json.dumps(comment_payload(comment, number=17)))
    outputs = tmp_path / "outputs"
    outputs.write_text("")
    comment_env = {**env, "GITHUB_EVENT_NAME": "issue_comment", "GITHUB_EVENT_PATH": str(event),
                   "GITHUB_OUTPUT": str(outputs)}  # fmt: skip
    result = CliRunner().invoke(cli, ["rerun-failed", "--decide-only"], env=comment_env)
    assert result.exit_code == 0, result.output
    assert "usage: /rerun-failed [<run_id>] alone in the comment" in result.output
    assert "\n-1\n" in outputs.read_text() and api.state.workflow_dispatches == []


def test_a_source_triage_without_classes_is_refused_in_one_line(
    api: FakeGitHub, env: dict[str, str], tmp_path: Path
) -> None:
    """The source run's triage.json (an older infx's, or edited) must not crash the rerun's
    triage; it is named and refused."""
    sweep = Sweep(plan_of(concs=(4,)), record())
    publish(api, tmp_path, sweep)
    previous = tmp_path / "previous"
    previous.mkdir()
    attempt = {"run": 1, "attempt": 1, "pool": "mi355x", "node": "n1"}  # no conclusion, class
    (previous / "triage.json").write_text(
        json.dumps({"format": "infx-sweep-triage/1", "attempts": [attempt]})
    )
    result, _ = triage(env, tmp_path, sweep, "--results", str(tmp_path / "none"),
                       "--previous", str(previous))  # fmt: skip
    assert result.exit_code == 2, result.output
    assert "is not a triage file" in result.output


def test_a_run_of_a_forks_commits_is_never_rerun(
    api: FakeGitHub, env: dict[str, str], tmp_path: Path, checkout: Path
) -> None:
    """A fork's pull_request run executes the fork's own run-sweep.yml: it can upload any
    sweep-plan (rows with its own image, a rerun.json naming a same-repository PR) and fail
    on purpose. Named after a branch of this repository, it must not be retried, rerun on a
    comment, planned or dispatched: its rows would run on the self-hosted GPU runners."""
    from tests.actions.harness import comment_payload

    sweep = Sweep(plan_of(concs=(4, 8)), record(), failed={1: ("failure", "Run the recipe", LOST)})
    publish(api, tmp_path, sweep, head_repo="mallory/bench")
    automatic = rerun(env, checkout, "--scope", "infra", "--automatic")
    assert automatic.exit_code == 1 and "mallory/bench" in automatic.output, automatic.output
    by_hand = rerun(env, checkout)
    assert by_hand.exit_code == 1 and "mallory/bench" in by_hand.output, by_hand.output

    api.state.permissions["maintainer"] = "write"
    comment = api.state.add_comment(17, "maintainer", f"/rerun-failed {RUN}", 300)
    event = tmp_path / "event.json"
    event.write_text(json.dumps(comment_payload(comment, number=17)))
    outputs = tmp_path / "outputs"
    outputs.write_text("")
    comment_env = {**env, "GITHUB_EVENT_NAME": "issue_comment", "GITHUB_EVENT_PATH": str(event),
                   "GITHUB_OUTPUT": str(outputs)}  # fmt: skip
    decided = CliRunner().invoke(cli, ["rerun-failed", "--decide-only"], env=comment_env)
    assert decided.exit_code == 0 and "mallory/bench" in decided.output, decided.output
    assert "rerun-of" not in outputs.read_text()

    # A decision forged for it is refused by the acting job.
    forged = {"workflow": "run-sweep.yml", "ref": "feature",
              "inputs": {"rerun-of": str(RUN), "scope": "infra", "pr-number": "17"}}  # fmt: skip
    run_event = tmp_path / "run-event.json"
    run_event.write_text(json.dumps({"action": "completed", "workflow_run": {"id": RUN}}))
    acted = CliRunner().invoke(cli, ["sweep", "dispatch-rerun"], env={
        **env, "GITHUB_EVENT_NAME": "workflow_run", "GITHUB_EVENT_PATH": str(run_event),
        "DISPATCH": json.dumps(forged)})  # fmt: skip
    assert acted.exit_code == 2 and "mallory/bench" in acted.output, acted.output
    assert api.state.workflow_dispatches == []

    # Dispatched anyway (by hand), the rerun's planning job refuses it.
    source = tmp_path / "source" / "sweep-plan"
    source.mkdir(parents=True)
    (source / "sweep.json").write_text(json.dumps(sweep.plan))
    (source / "rerun.json").write_text(
        json.dumps({**sweep.record.as_json(), "run_id": RUN, "root": RUN})
    )
    (tmp_path / "manifest.json").write_text("{}")
    old = Path.cwd()
    os.chdir(checkout)
    try:
        planned = CliRunner().invoke(cli, [
            "sweep", "rerun-plan", "--source-run", str(RUN), "--source-dir",
            str(tmp_path / "source"), "--manifest", str(tmp_path / "manifest.json"),
            "--output-dir", str(tmp_path / "out"), "--pr", "17", "--run-id", "4200",
            "--ref-name", "feature",
        ], env=env)  # fmt: skip
    finally:
        os.chdir(old)
    assert planned.exit_code == 1 and "mallory/bench" in planned.output, planned.output
    assert not (tmp_path / "out").exists()


@pytest.mark.parametrize("scope", ["missing", "infra"])
def test_a_sweep_whose_every_job_lost_its_runner_reruns_every_job(
    api: FakeGitHub, env: dict[str, str], tmp_path: Path, checkout: Path, scope: str
) -> None:
    plan = canary_plan()
    failed = {i: ("failure", "Run the recipe", LOST) for i in range(4)}
    publish(api, tmp_path, Sweep(plan, record(canary=True), failed=failed))
    result = rerun(env, checkout, "--scope", scope)
    assert result.exit_code == 0, result.output
    assert "Rerunning 4 of 4 jobs" in result.output and "canary, first" in result.output
