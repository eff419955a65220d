"""The pure rules of a rerun: which rows have no valid result, which an automatic retry
takes, where infra retries go, when the canary runs first, and when a run may not be
rerun. Each refusal is an input that would otherwise dispatch GPU jobs wrongly."""

from __future__ import annotations

import json
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest

from infx.errors import UsageError
from infx.github.client import Job, Run, Step
from infx.matrix.options import PlanOptions
from infx.matrix.rows import chunk_rows
from infx.rerun.rules import (
    jobs_of,
    missing,
    outcomes,
    pin_nodes,
    refusal,
    rerun_plan,
    row_id,
    run_number,
    select,
    valid_points,
    whole_plan,
)
from infx.results.ingest.files import process_job
from infx.results.verdict.floors import Floors
from infx.sweep.record import RunRecord
from tests.results.formats import fixed_row, lm_eval_result, multinode_row, vllm_result, write

T0 = datetime(2026, 12, 1, tzinfo=UTC)


def plan_of(concs=(4, 8, 16, 32), evals=True) -> dict:
    rows = [fixed_row(conc=c, tp=8) for c in concs]
    ev = [fixed_row(conc=32, tp=8, isl=8192, **{"exp-name": "llama70b_8k1k", "run-eval": True,
                                                 "eval-only": True})] if evals else []  # fmt: skip
    for row in ev:
        row.pop("recipe-fingerprint")
    return {
        "single_node": {"1k1k": rows},
        "multi_node": {},
        "evals": ev,
        "agentic_evals": [],
        "multinode_evals": [],
        "multinode_agentic_evals": [],
        "changelog_metadata": {"base_ref": "a", "head_ref": "b", "entries": []},
    }


def measured(tmp_path: Path, row: dict, *, score: float = 0.95, concs=None) -> dict:
    """What `infx results process` writes for the row's job."""
    folder = tmp_path / f"job-{len(list(tmp_path.iterdir()))}"
    if row.get("run-eval"):
        write(folder / "lm-eval/m/results_1.json", lm_eval_result(strict=score))
    elif isinstance(row["conc"], list):
        for c in concs or row["conc"]:
            write(folder / f"{row['exp-name']}_conc{c}.json", vllm_result(
                conc=c, total=1000, output=500, ttft_ms=1, tpot_ms=1, itl_ms=1, e2el_ms=1))  # fmt: skip
        if concs is not None:
            outputs = [folder / f"{row['exp-name']}_conc{c}.json" for c in concs]
            part = {**row, "conc": list(concs)}
            return process_job(part, folder, outputs)
    else:
        write(folder / f"{row['exp-name']}.json", vllm_result(
            conc=row["conc"], total=1000, output=500, ttft_ms=1, tpot_ms=1, itl_ms=1, e2el_ms=1))  # fmt: skip
    return process_job(row, folder)


def test_rows_without_a_result_of_their_own_recipe_are_missing(tmp_path: Path) -> None:
    plan = plan_of()
    jobs = jobs_of(plan)
    docs = [measured(tmp_path, row) for row, _ in jobs[:2]]
    docs.append(measured(tmp_path, {**jobs[2][0], "image": "vllm:older"}))  # another recipe
    docs.append(measured(tmp_path, jobs[4][0]))  # the eval
    assert missing(jobs, valid_points(docs, None)) == [2, 3]


def test_an_eval_below_its_floor_has_no_valid_result(tmp_path: Path) -> None:
    plan = plan_of(concs=(4,))
    jobs = jobs_of(plan)
    docs = [measured(tmp_path, jobs[0][0]), measured(tmp_path, jobs[1][0], score=0.5)]
    assert missing(jobs, valid_points(docs, None)) == []
    floors = Floors(default={"gsm8k": 0.9})
    assert missing(jobs, valid_points(docs, floors)) == [1]


def test_a_multi_node_job_missing_one_of_its_concurrencies_runs_again(tmp_path: Path) -> None:
    row = multinode_row(conc=[1, 8, 32])
    plan = {**plan_of(concs=(), evals=False), "multi_node": {"8k1k": [row]}}
    jobs = jobs_of(plan)
    partial = measured(tmp_path, row, concs=[1, 8])
    assert missing(jobs, valid_points([partial], None)) == [0]
    assert missing(jobs, valid_points([partial, measured(tmp_path, row)], None)) == []


def job(name: str, conclusion: str, node: str, step: str | None = None, jid: int = 1) -> Job:
    steps = (Step(1, "Set up job", "completed", "success"),)
    if step:
        steps += (Step(2, step, "completed", "failure"),)
    return Job(jid, 5, 1, name, "completed", conclusion, T0, T0 + timedelta(minutes=20),
               node, ("mi355x",), steps)  # fmt: skip


LOST = "The self-hosted runner: x lost communication with the server."


def test_infra_scope_takes_infra_failures_and_their_collateral_only(tmp_path: Path) -> None:
    plan = plan_of(concs=(4, 8, 16, 32, 64), evals=False)
    jobs = jobs_of(plan)
    names = [f"single-node (0) / single/0/{i} llama70b_1k1k" for i in range(5)]
    ran = [
        job(names[0], "success", "n0", jid=1),
        job(names[1], "failure", "n3", "Run the recipe", jid=2),
        job(names[2], "cancelled", "", jid=3),
        job(names[3], "failure", "n3", "Run the recipe", jid=4),
    ]  # the fifth never started
    seen = outcomes(ran, plan, {2: LOST, 4: None})
    assert [o.kind for o in seen] == [None, "runner-lost", "cancelled", "runner-lost"]
    everything_missing = list(range(1, 5))
    assert select(jobs, everything_missing, plan, seen, "infra") == [1, 2, 3, 4]
    assert select(jobs, everything_missing, plan, seen, "missing") == [1, 2, 3, 4]
    # A recipe error among the failures: only the infra failures are retried automatically.
    recipe = outcomes([*ran, job(names[4], "failure", "n1", "Run the recipe", jid=5)], plan,
                      {2: LOST, 4: None, 5: "ValueError: bad flag"})  # fmt: skip
    assert select(jobs, everything_missing, plan, recipe, "infra") == [1, 3]
    # Nothing failed: nothing to retry automatically.
    assert select(jobs, [], plan, outcomes(ran[:1], plan, {}), "infra") == []


CHECKOUT = "Run actions/checkout@11bd71901bbe5b1630ceea73d27597364c9af683"
DENIED = (
    "##[error]File was unable to be removed Error: EACCES: permission denied, rmdir "
    "'/home/runner/actions-runner/_work/bench/bench/results'"
)


def test_failures_past_the_log_budget_are_unread_and_not_retried_blindly() -> None:
    """35 checkout failures on one node, logs read for 30 (MAX_LOGS): the other 5 are
    `unread`, not recipe errors, and the automatic retry takes only the 30 it read as infra
    (no fail-fast collateral either: not every failure is known to be infra)."""
    from infx.rerun.rules import MAX_LOGS, failures

    plan = plan_of(concs=tuple(range(1, 36)), evals=False)
    jobs = jobs_of(plan)
    names = [f"single-node (0) / single/0/{i} llama70b_1k1k" for i in range(35)]
    ran = [job(name, "failure", "n3", CHECKOUT, jid=i + 1) for i, name in enumerate(names)]
    logs = {i + 1: DENIED for i in range(MAX_LOGS)}
    seen = outcomes(ran, plan, logs)
    kinds = [o.kind for o in seen]
    assert kinds == ["workspace-permission"] * 30 + ["unread"] * 5
    assert "recipe-error" not in kinds
    assert select(jobs, list(range(35)), plan, seen, "infra") == list(range(30))
    assert select(jobs, list(range(35)), plan, seen, "missing") == list(range(35))
    assert failures(seen)[row_id(jobs[34][0])] == "unread on n3"
    pins, _ = pin_nodes([r for r, _ in jobs], seen, {"mi355x": ["n0", "n3"]})
    assert set(pins.values()) == {"n0"} and len(pins) == 30


def test_infra_retries_go_round_robin_to_nodes_that_did_not_fail(tmp_path: Path) -> None:
    plan = plan_of(concs=(4, 8, 16), evals=False)
    rows = [row for row, _ in jobs_of(plan)]
    names = [f"single-node (0) / single/0/{i} llama70b_1k1k" for i in range(3)]
    seen = outcomes(
        [job(names[i], "failure", node, "Run the recipe", jid=i + 1)
         for i, node in enumerate(["n1", "n1", "n2"])],
        plan, {1: LOST, 2: LOST, 3: "mkdir: cannot create '/x/_work/r': Permission denied"},
    )  # fmt: skip
    pins, notes = pin_nodes(rows, seen, {"mi355x": ["n0", "n1", "n2", "n3"]})
    assert [pins[row_id(r)] for r in rows] == ["n0", "n3", "n0"] and notes == []
    pins, notes = pin_nodes(rows, seen, {"mi355x": ["n1", "n2"]})
    assert pins == {} and len(notes) == 3


def test_the_canary_runs_first_when_the_recipe_changed_or_it_failed(tmp_path: Path) -> None:
    plan = plan_of(concs=(4, 8, 16), evals=True)
    jobs = jobs_of(plan)
    # Only conc 16 failed; the recipe is unchanged: it runs alone, no canary.
    quiet = rerun_plan(plan, [2], recipe_changed=False, source_canary=True)
    assert quiet.canary is None and [r["conc"] for r, _ in quiet.jobs] == [16]
    assert quiet.plan["evals"] == [] and "canary" not in quiet.plan
    # The recipe changed since: the plan's canary (conc 4, which had a result) runs first.
    changed = rerun_plan(plan, [2], recipe_changed=True, source_canary=False)
    assert changed.canary["conc"] == 4
    assert [r["conc"] for r in changed.plan["canary"]] == [4]
    assert [r["conc"] for r, _ in jobs_of(changed.plan["remaining"])] == [16]
    # The canary itself failed in a sweep that had one: it goes first again.
    again = rerun_plan(plan, [0, 1, 2, 3], recipe_changed=False, source_canary=True)
    assert again.canary["conc"] == 4 and len(jobs_of(again.plan["remaining"])) == 3
    # Rows of a split plan come back whole.
    split = {"canary": [jobs[0][0]], "remaining": {**plan, "single_node": {"1k1k": [
        r for r, _ in jobs[1:3]]}}}  # fmt: skip
    assert sorted(map(row_id, [r for r, _ in jobs_of(whole_plan(split))])) == sorted(
        map(row_id, [r for r, _ in jobs])
    )
    assert chunk_rows(quiet.plan, "single", 0) == [jobs[2][0]]


def run(rid: int = 5, status: str = "completed", conclusion: str = "failure", minute: int = 0,
        path: str = ".github/workflows/run-sweep.yml") -> Run:  # fmt: skip
    return Run(rid, "a" * 40, "pull_request", status, conclusion, path, 1,
               f"https://github.com/acme/bench/actions/runs/{rid}",
               T0 + timedelta(minutes=minute), "feature")  # fmt: skip


def record(scope: str | None = None, depth: int = 0) -> RunRecord:
    return RunRecord(5, "pull_request", "a" * 40, 17, "full-sweep-enabled", PlanOptions(),
                     True, False, False, 5, None, scope, depth)  # fmt: skip


@pytest.mark.parametrize(
    ("kwargs", "why"),
    [
        ({"run": run(path=".github/workflows/ci.yml")}, "not a run of run-sweep.yml"),
        ({"run": run(status="in_progress")}, "wait until it completes"),
        ({"record": None}, "has no rerun.json"),
        ({"branch_runs": [run(6, status="queued", minute=5)]}, "run 6 of run-sweep.yml is queued"),
        ({"newer_sweeps": [5, 9]}, "run 9 is a newer sweep"),
        ({"record": record(depth=10)}, "already rerun number 10"),
        ({"scope": "everything"}, "scope must be one of"),
        ({"automatic": True, "run": run(conclusion="cancelled")}, "only failed sweeps"),
        ({"automatic": True, "record": record(scope="infra", depth=1)}, "retried once"),
    ],
)
def test_refusals(kwargs: dict, why: str) -> None:
    given = {"run": run(), "record": record(), "branch_runs": [run()], "newer_sweeps": [5],
             "scope": "missing", "automatic": False, **kwargs}  # fmt: skip
    found = refusal(
        given["run"], "run-sweep.yml", given["record"], given["branch_runs"],
        given["newer_sweeps"], scope=given["scope"], automatic=given["automatic"],
    )  # fmt: skip
    assert found is not None and why in found


def test_a_failed_run_that_is_the_newest_sweep_may_be_rerun() -> None:
    assert refusal(run(), "run-sweep.yml", record(), [run()], [5], scope="missing") is None
    assert refusal(run(), "run-sweep.yml", record(), [], [], scope="infra", automatic=True) is None


def test_records_round_trip_and_refuse_garbage() -> None:
    original = record()
    again = RunRecord.from_json(json.loads(json.dumps(original.as_json())), "rerun.json")
    assert again == original
    child = original.rerun(7, "b" * 40, "infra")
    assert (child.root, child.source, child.depth, child.scope) == (5, 5, 1, "infra")
    for bad in ({}, {"format": "infx-rerun-record/1"}, [], {**original.as_json(), "scope": "all"}):
        with pytest.raises(Exception, match="not an infx rerun record"):
            RunRecord.from_json(bad, "rerun.json")


def test_two_configs_measuring_the_same_point_with_other_images_each_need_a_result(
    tmp_path: Path,
) -> None:
    """Real InferenceX configs do this (an sglang image and its .post1 on the same
    hardware and parallelism): one of them failing must not pass for measured."""
    plan = plan_of(concs=(4,), evals=False)
    other = {**plan["single_node"]["1k1k"][0], "image": "vllm:next", "recipe-fingerprint": "c" * 64}
    plan["single_node"]["1k1k"].append(other)
    jobs = jobs_of(plan)
    docs = [measured(tmp_path, jobs[0][0])]
    assert missing(jobs, valid_points(docs, None)) == [1]


@pytest.mark.parametrize("value", ["1", "4200", "9" * 20])
def test_a_run_number_is_one_to_twenty_digits(value: str) -> None:
    assert run_number(value, "--run-id") == int(value)


@pytest.mark.parametrize(
    "value", ["", "0", "01", "1" * 21, " 1", "+1", "1_0", "\u00b2", "\u0661", "9" * 5000]
)
def test_anything_else_is_a_usage_error_naming_the_option(value: str) -> None:
    with pytest.raises(UsageError, match="--run-id must be a run id"):
        run_number(value, "--run-id")
