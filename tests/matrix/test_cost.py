"""The cost of a plan before it runs: recorded durations by identity, documented
assumptions otherwise, wall time per pool, and the budget verdict."""

from __future__ import annotations

import math

import pytest

from infx.matrix.cost import (
    AGENTX_FAST_MINUTES,
    MINUTES_PER_POINT,
    BudgetVerdict,
    estimate,
    job_key,
    verdict,
    wall_minutes,
)

FIXED = {
    "image": "vllm/vllm-openai-rocm:v0.11.0",
    "model": "meta-llama/Llama-3.3-70B-Instruct",
    "model-prefix": "llama70b",
    "precision": "fp8",
    "framework": "vllm",
    "runner": "mi355x",
    "isl": 1024,
    "osl": 1024,
    "tp": 8,
    "pp": 1,
    "dcp-size": 1,
    "pcp-size": 1,
    "conc": 4,
    "max-model-len": 2304,
    "ep": 1,
    "dp-attn": False,
    "spec-decoding": "none",
    "exp-name": "llama70b_1k1k",
    "disagg": False,
    "run-eval": False,
    "eval-only": False,
    "recipe-fingerprint": "a" * 64,
}
AGENTIC = {
    "image": "vllm/vllm-openai-rocm:nightly-1",
    "model": "deepseek-ai/DeepSeek-V4.1-Flash",
    "model-prefix": "dsv41flash",
    "precision": "fp4",
    "framework": "vllm",
    "runner": "cluster:mi355x-amds",
    "tp": 8,
    "pp": 1,
    "dcp-size": 1,
    "pcp-size": 1,
    "ep": 1,
    "dp-attn": False,
    "spec-decoding": "mtp",
    "conc": 16,
    "kv-offloading": "none",
    "total-cpu-dram-gb": 0,
    "duration": 3600,
    "exp-name": "dsv41flash_tp8_conc16_kvnone_spec-mtp",
    "scenario-type": "agentic-coding",
}
MULTI = {
    "image": "lmsysorg/sglang-rocm:v0.5.12",
    "model": "amd/DeepSeek-R1",
    "model-prefix": "dsr1",
    "precision": "fp4",
    "framework": "sglang-disagg",
    "runner": "mi355x-disagg",
    "isl": 8192,
    "osl": 1024,
    "spec-decoding": "none",
    "conc": [1, 8, 32],
    "prefill": {"num-worker": 1, "tp": 8, "ep": 1, "dp-attn": False, "additional-settings": []},
    "decode": {"num-worker": 1, "tp": 8, "ep": 1, "dp-attn": False, "additional-settings": []},
    "max-model-len": 9472,
    "exp-name": "dsr1_8k1k",
    "disagg": True,
    "run-eval": False,
    "eval-only": False,
    "eval-all-concs": False,
}


def test_identity_ignores_how_a_point_is_produced_but_not_what_it_measures() -> None:
    key = job_key(FIXED)
    new_recipe = {**FIXED, "image": "vllm:next", "recipe-fingerprint": "b" * 64, "exp-name": "x"}
    assert job_key(new_recipe) == key
    assert job_key({**FIXED, "conc": 8}) != key
    assert job_key({**FIXED, "tp": 4}) != key
    assert job_key({**FIXED, "runner": "mi300x"}) != key
    assert job_key({**FIXED, "run-eval": True, "eval-only": True}) != key
    settings = {**MULTI["prefill"], "additional-settings": ["--chunked-prefill"]}
    assert job_key({**MULTI, "prefill": settings}) == job_key(MULTI)
    versioned = {**AGENTIC, "router": {"name": "vllm-router", "version": "2"}}
    assert job_key(versioned) == job_key({**AGENTIC, "router": {"name": "vllm-router"}})
    assert job_key(versioned) != job_key(AGENTIC)


def test_assumptions_when_nothing_was_recorded() -> None:
    fixed, agentic, multi, multi_eval = estimate(
        [(FIXED, False), (AGENTIC, False), (MULTI, False), ({**MULTI, "run-eval": True}, True)]
    )
    assert (fixed.minutes, fixed.gpus, fixed.gpu_hours) == (MINUTES_PER_POINT, 8, 2.0)
    assert fixed.source == f"assumed: {MINUTES_PER_POINT} min per point x 1"
    assert (agentic.minutes, agentic.gpu_hours) == (60, 8.0)
    assert agentic.source == "assumed: its duration, 3600 s"
    # Three concurrencies on 16 GPUs; the eval runs at one of them.
    assert (multi.minutes, multi.gpus, multi.gpu_hours) == (45, 16, 12.0)
    assert (multi_eval.minutes, multi_eval.gpu_hours) == (15, 4.0)
    assert all(c.recorded == 0 for c in (fixed, agentic, multi, multi_eval))


def test_recorded_durations_of_the_same_identity_win() -> None:
    durations = {job_key(FIXED): [600, 1800, 900, 700, 650]}
    (cost,) = estimate([({**FIXED, "image": "vllm:next"}, False)], durations)
    assert cost.minutes == 700 / 60 and cost.recorded == 5
    assert cost.source == "recorded: median of 5"
    (other,) = estimate([({**FIXED, "conc": 8}, False)], durations)
    assert other.recorded == 0


def test_only_the_newest_recorded_durations_count() -> None:
    old, new = [3600] * 30, [600] * 10
    (cost,) = estimate([(FIXED, False)], {job_key(FIXED): old + new})
    assert cost.minutes == 10 and cost.source == "recorded: median of 10"


def test_agentx_fast_uses_the_fast_profile_not_full_length_history() -> None:
    durations = {job_key(AGENTIC): [3700.0]}
    (normal,) = estimate([(AGENTIC, False)], durations)
    (fast,) = estimate([(AGENTIC, False)], durations, agentx_fast=True)
    assert normal.minutes == pytest.approx(3700 / 60)
    assert fast.minutes == AGENTX_FAST_MINUTES and fast.recorded == 0


def test_wall_time_spreads_node_minutes_over_the_pool() -> None:
    costs = estimate([({**FIXED, "conc": c}, False) for c in (4, 8, 16, 32)] + [(MULTI, False)])
    wall = wall_minutes(costs, {"mi355x": 2, "mi355x-disagg": 2})
    assert wall["mi355x"] == 4 * 15 / 2
    # One job on two nodes: never shorter than itself.
    assert wall["mi355x-disagg"] == 45
    assert wall_minutes(costs, {})["mi355x"] == 60  # an unknown pool counts as one node


def test_budget_verdicts() -> None:
    costs = estimate([(FIXED, False)] * 3)  # 6 GPU-hours
    assert verdict(costs, "full-sweep-enabled", {"full-sweep-enabled": 6}).over is False
    over = verdict(costs, "full-sweep-enabled", {"full-sweep-enabled": 5.9})
    assert over.over and over.text() == (
        "over budget: 6.0 of 5.9 GPU-hours for label full-sweep-enabled"
    )
    free = verdict(costs, "push", {"full-sweep-enabled": 1})
    assert not free.over and free.text() == "6.0 GPU-hours; no budget is set for a push to main"


def test_a_number_that_is_not_a_number_is_over_any_budget() -> None:
    assert BudgetVerdict("push", math.nan, 100).over
    assert BudgetVerdict("push", math.inf, 100).over


def test_a_plan_exactly_at_its_budget_is_within_it() -> None:
    """Ten jobs recorded at 21 minutes on 8 GPUs are 28 GPU-hours; floating point adds them
    up to a hair above 28, which must not hold the sweep for an approval."""
    rows = [({**FIXED, "conc": c}, False) for c in range(1, 11)]
    recorded = {job_key(row): [1260.0] for row, _ in rows}
    costs = estimate(rows, recorded)
    at = verdict(costs, "full-sweep-enabled", {"full-sweep-enabled": 28})
    assert not at.over and at.text() == (
        "within budget: 28.0 of 28.0 GPU-hours for label full-sweep-enabled"
    )
    assert verdict(costs, "full-sweep-enabled", {"full-sweep-enabled": 27.99}).over


@pytest.mark.parametrize(
    ("adder", "permission", "held"),
    [
        ("ana", "admin", False),
        ("ana", "maintain", False),
        ("ana", "write", False),
        ("tri", "read", True),  # the triage role, as GitHub reports it
        ("tri", "triage", True),
        ("gone", "none", True),
        (None, None, True),
    ],
)
def test_a_budgeted_label_is_trusted_only_from_someone_who_may_push(
    adder: str | None, permission: str | None, held: bool
) -> None:
    from infx.matrix.cost import labeler_hold

    why = labeler_hold("full-sweep-enabled", adder, permission)
    assert bool(why) is held
    found = BudgetVerdict("full-sweep-enabled", 2.0, 100.0, why)
    assert found.over is held
    assert not BudgetVerdict("full-sweep-enabled", 2.0, None, why).over  # no budget: no limit
    nothing = BudgetVerdict("full-sweep-enabled", 0.0, 100.0, why)  # nothing to approve
    assert not nothing.over and nothing.text().startswith("within budget: 0.0 of 100.0")
    if held:
        assert found.text().startswith("approval needed: label full-sweep-enabled")
