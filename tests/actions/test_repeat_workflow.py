"""Repeats that settle an unconfirmed verdict, through run-sweep.yml as GitHub runs it:
a rerun with scope `repeat` of the 40-job sweep (test_gpu_hours's run A) measures again
only the rows its verdict left unconfirmed, priced like any rerun; its compare pools its
own measurements with run A's table, and its repeat job decides from the default
branch's settings whether another repeat follows."""

from __future__ import annotations

import json
import re
from dataclasses import replace
from pathlib import Path

from tests.actions import test_gpu_hours as forty
from tests.actions.gpu import Cluster, dispatch_repeat, moved_base, point, publish
from tests.actions.harness import load, simulate
from tests.actions.test_gpu_hours import A_ID, B_ID, POOLS, SourceRun, results, world_for
from tests.github.fake_api import FakeGitHub

SWEEP = load("run-sweep.yml")
source_run = forty.source_run  # run A, the module fixture


def _publish_with_verdict(source_run: SourceRun, api: FakeGitHub, world, tmp_path: Path,
                          rows: list[dict]) -> None:  # fmt: skip
    """Run A as GitHub keeps it, its verdict naming `rows` as the repeats to run."""
    folder = tmp_path / "a-verdict"
    folder.mkdir()
    wanted = [{"identity": r["identity"], "recipe": r["recipe"], "count": 1} for r in rows]
    (folder / "verdict.json").write_text(json.dumps(
        {"repeats": {"rows": wanted, "count": len(wanted), "gpu_hours": 1.0}}))  # fmt: skip
    run = replace(source_run.run, artifacts={**source_run.run.artifacts, "results-verdict": folder})
    api.state.add_pull(17, head_sha=source_run.repo.head, commits=[source_run.repo.head],
                       labels=["full-sweep-enabled"])  # fmt: skip
    publish(api, world, run, A_ID, head_sha=source_run.repo.head, conclusion="failure",
            jobs=source_run.jobs, logs=source_run.logs)  # fmt: skip


def test_a_sweep_leaves_its_verdict_and_pool_for_a_repeat(source_run: SourceRun) -> None:
    run = source_run.run
    assert run.ran("compare"), run.log("compare")
    assert (run.artifacts["results-pool"] / f"run-{A_ID}" / "results.json").is_file()
    assert (run.artifacts["results-verdict"] / "verdict.json").is_file()
    # Its repeat job ran the default branch's infx, whose settings leave repeats off.
    assert run.ran("repeat") and "no repeat: confirm-repeats is off" in run.log("repeat")


def test_a_repeat_measures_the_unconfirmed_rows_again_and_pools_them(
    source_run: SourceRun, api: FakeGitHub, tmp_path: Path
) -> None:
    world = world_for(source_run.repo, api, tmp_path)
    measured = results(source_run.run)
    unconfirmed = measured[:2]
    _publish_with_verdict(source_run, api, world, tmp_path, unconfirmed)
    rerun = dispatch_repeat(world, Cluster(api, B_ID, POOLS, tmp_path / "gpu"), A_ID)
    assert rerun.ran("setup"), rerun.log("setup")
    assert "repeat: unconfirmed" in rerun.log("setup")
    # Only the unconfirmed rows run again, priced and gated like any rerun.
    ids = {json.dumps([r["identity"]["conc"], r["recipe"]], sort_keys=True) for r in unconfirmed}
    assert len(rerun.dispatches) == 2, [point(d.row) for d in rerun.dispatches]
    plan = rerun.artifacts["sweep-plan"]
    estimate = json.loads((plan / "estimate.json").read_text())
    assert estimate and rerun.outputs["setup"]["over-budget"] == "false"
    record = json.loads((plan / "rerun.json").read_text())
    assert (record["scope"], record["repeats"], record["source"]) == ("repeat", 1, A_ID)
    # Its own table holds its measurements alone; the pool holds run A's and its own.
    own = json.loads((rerun.artifacts["results-repeat"] / "results.json").read_text())["rows"]
    assert {json.dumps([r["identity"]["conc"], r["recipe"]], sort_keys=True) for r in own} == ids
    assert rerun.ran("compare"), rerun.log("compare")
    pool = sorted(p.parent.name for p in rerun.artifacts["results-pool"].rglob("results.json"))
    assert pool == [f"run-{A_ID}", f"run-{B_ID}"]
    verdict = json.loads((rerun.artifacts["results-verdict"] / "verdict.json").read_text())
    assert verdict["method"]["pr_runs"] == 2
    assert rerun.ran("repeat") and "confirm-repeats is off" in rerun.log("repeat")


def test_the_repeat_job_may_only_start_workflows() -> None:
    job = SWEEP["jobs"]["repeat"]
    assert job["permissions"] == {"contents": "read", "actions": "write"}
    (step,) = [s for s in job["steps"] if "infx sweep repeat" in s.get("run", "")]
    assert "${{" not in step["run"]
    checkout = job["steps"][0]
    assert checkout["with"]["ref"] == "${{ github.event.repository.default_branch }}"
    # Never for a fork's pull request (nor a push to main).
    assert "github.event.pull_request.head.repo.full_name == github.repository" in job["if"]


def test_an_over_budget_repeat_starts_no_gpu_job_until_approved(
    source_run: SourceRun, api: FakeGitHub, tmp_path: Path
) -> None:
    """A repeat spends GPU time like any rerun: over its label's budget (read at the base),
    every GPU job waits for a required reviewer of gpu-budget."""
    repo = moved_base(
        source_run.repo, tmp_path, {"infx.toml": "[budget]\nfull-sweep-enabled = 0.01\n"}
    )
    world = world_for(repo, api, tmp_path)
    _publish_with_verdict(source_run, api, world, tmp_path, results(source_run.run)[:2])
    api.state.environment("gpu-budget", ["lead"])
    cluster = Cluster(api, B_ID, POOLS, tmp_path / "gpu")
    rerun = dispatch_repeat(world, cluster, A_ID, approvals={"gpu-budget": None})
    assert rerun.ran("setup"), rerun.log("setup")
    assert rerun.outputs["setup"]["over-budget"] == "true"
    assert rerun.jobs["budget-approval"] == "waiting"
    assert rerun.dispatches == []
    assert rerun.jobs.get("repeat") != "success"  # nothing measured: nothing asks again


def test_a_fork_pull_request_never_reaches_the_repeat_job(world, sweep_repo) -> None:
    from tests.actions.harness import pr_payload

    payload = pr_payload("synchronize", ["full-sweep-enabled"], fork=True,
                         head_sha=sweep_repo.head, base_sha=sweep_repo.base)  # fmt: skip
    run = simulate(world, "run-sweep.yml", "pull_request", payload)
    assert run.jobs.get("repeat", "skipped") == "skipped", run.logs


def test_with_the_setting_on_a_settled_repeat_asks_for_no_more(
    source_run: SourceRun, api: FakeGitHub, tmp_path: Path
) -> None:
    """The default branch turns repeats on; the repeat's pooled verdict leaves nothing
    unconfirmed (every config is new here: main has no history), so no further repeat."""
    repo = moved_base(source_run.repo, tmp_path, {"infx.toml": "[results]\nconfirm-repeats = 2\n"})
    world = world_for(repo, api, tmp_path)
    _publish_with_verdict(source_run, api, world, tmp_path, results(source_run.run)[:2])
    rerun = dispatch_repeat(world, Cluster(api, B_ID, POOLS, tmp_path / "gpu"), A_ID)
    # infx.toml changed since run A: the canary runs first, as before any rerun.
    assert len([d for d in rerun.dispatches if not d.job.startswith("canary")]) == 2
    assert rerun.ran("repeat") and "no repeat: no config is unconfirmed" in rerun.log("repeat")
    assert api.state.workflow_dispatches == []


def test_a_paired_repeat_runs_main_s_row_beside_each_pr_row_on_one_node(
    source_run: SourceRun, api: FakeGitHub, tmp_path: Path
) -> None:
    """With `paired-repeats` on the default branch, each unconfirmed row runs again with
    main's row of its config beside it (here main moved its images on since run A, and
    the merge keeps the PR's), both pinned to the node that measured the row in run A, the
    order alternating pair by pair; the plan prices both halves and records the pairs."""
    configs = (source_run.repo.path / "configs" / "amd-master.yaml").read_text()
    mains = re.sub(r"(image: \S+:)(\S+)", r"\1main-\2", configs)
    assert mains != configs
    repo = moved_base(
        source_run.repo,
        tmp_path,
        {"infx.toml": "[results]\npaired-repeats = true\n", "configs/amd-master.yaml": mains},
        merged={"configs/amd-master.yaml": configs},
    )
    world = world_for(repo, api, tmp_path)
    unconfirmed = results(source_run.run)[:2]
    _publish_with_verdict(source_run, api, world, tmp_path, unconfirmed)
    rerun = dispatch_repeat(world, Cluster(api, B_ID, POOLS, tmp_path / "gpu"), A_ID)
    assert rerun.ran("setup"), rerun.log("setup")
    plan = rerun.artifacts["sweep-plan"]
    found = json.loads((plan / "pairs.json").read_text())
    assert len(found) == 2 and all(p["base"] is not None for p in found), found
    assert [p["order"] for p in found] == [["pr", "base"], ["base", "pr"]]
    nodes = {p["node"] for p in found}
    assert all(nodes) and "main's image beside it" in rerun.log("setup")
    # Both halves of each pair ran, each on its pair's node (the canary aside).
    ran = [d for d in rerun.dispatches if not d.job.startswith("canary")]
    assert len(ran) == 4, [point(d.row) for d in ran]
    for pair in found:
        on = [d.node for d in ran if point(d.row) == point(pair["pr"])]
        assert on == [pair["node"]] * 2, (on, pair["node"])
    # Priced: the estimate holds every job of the plan, both halves.
    estimate = json.loads((plan / "estimate.json").read_text())
    assert estimate
