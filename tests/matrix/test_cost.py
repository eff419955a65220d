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
    priced_sizes,
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
    from infx.sweep.authority import labeler_hold

    why = labeler_hold("full-sweep-enabled", adder, permission)
    assert bool(why) is held
    found = BudgetVerdict("full-sweep-enabled", 2.0, 100.0, why)
    assert found.over is held
    # Without a budget for the label the hold applies all the same (#25: a triager's
    # full-sweep-enabled started 11 GPU jobs unapproved when its label had no budget).
    unbudgeted = BudgetVerdict("full-sweep-enabled", 2.0, None, why)
    assert unbudgeted.over is held
    if held:
        assert unbudgeted.text().startswith("approval needed: label full-sweep-enabled")
        assert unbudgeted.text().endswith(
            "(2.0 GPU-hours; no budget is set for label full-sweep-enabled)"
        )
    nothing = BudgetVerdict("full-sweep-enabled", 0.0, 100.0, why)  # nothing to approve
    assert not nothing.over and nothing.text().startswith("within budget: 0.0 of 100.0")
    if held:
        assert found.text().startswith("approval needed: label full-sweep-enabled")


# --- GPU-hours as held: a job takes whole nodes -------------------------------------------


def _with(block: dict, **changes: object) -> dict:
    return {**block, **changes}


def test_a_single_node_job_holds_its_whole_node() -> None:
    """A tp4 server on an 8-GPU node uses 4 GPUs, but no other job gets the other 4: the
    budget counts what the job holds."""
    (cost,) = estimate([(_with(FIXED, tp=4), False)], node_gpus={"mi355x": 8})
    assert (cost.gpus, cost.held_gpus, cost.nodes) == (4, 8, 1)
    assert (cost.gpu_hours, cost.held_hours) == (1.0, 2.0)
    (unknown,) = estimate([(_with(FIXED, tp=2, runner="elsewhere"), False)])
    assert unknown.held_gpus == 8  # a label runners.yaml does not size: 8 GPUs a node
    (small,) = estimate([(_with(FIXED, tp=2, runner="gb200"), False)], node_gpus={"gb200": 4})
    assert (small.held_gpus, small.nodes) == (4, 1)


def test_a_multi_node_job_holds_every_node_of_every_worker() -> None:
    prefill = _with(MULTI["prefill"], tp=4)
    row = _with(MULTI, prefill=prefill)  # P 1x tp4, D 1x tp8: 12 GPUs on two 8-GPU nodes
    (cost,) = estimate([(row, False)], node_gpus={"mi355x-disagg": 8})
    assert (cost.gpus, cost.held_gpus, cost.nodes) == (12, 16, 2)
    # Two prefill workers of tp4 each take a node of their own.
    (two,) = estimate([(_with(row, prefill=_with(prefill, **{"num-worker": 2})), False)])
    assert (two.gpus, two.nodes, two.held_gpus) == (16, 3, 24)
    # The recipe asks for more nodes than the workers fill (InferenceX's gb200 rows do).
    asked = _with(prefill, tp=1, **{"additional-settings": ["PREFILL_NODES=2"]})
    (wide,) = estimate([(_with(row, prefill=asked, runner="gb200"), False)], node_gpus={"gb200": 4})
    assert (wide.gpus, wide.nodes, wide.held_gpus) == (9, 4, 16)


@pytest.mark.parametrize(
    ("setting", "nodes"),
    [
        ("PREFILL_NODES=2", 4),
        # The launcher exports the settings as one shell line: blanks around a word are the
        # shell's to drop, and one setting can hold several assignments.
        ("PREFILL_NODES=2 ", 4),
        ("\tPREFILL_NODES=3", 5),
        ("FOO=1 PREFILL_NODES=3", 5),
        ("PREFILL_NODES=02", 4),
        ("MY_PREFILL_NODES=9", 3),  # another variable
    ],
)
def test_recipe_node_settings_are_read_as_the_shell_reads_them(setting, nodes) -> None:
    prefill = _with(MULTI["prefill"], tp=1, **{"additional-settings": [setting]})
    row = _with(MULTI, prefill=prefill, runner="gb200")
    (cost,) = estimate([(row, False)], node_gpus={"gb200": 4})
    assert cost.nodes == nodes


@pytest.mark.parametrize(
    "setting",
    [
        "PREFILL_NODES=\u0663",  # Arabic-Indic 3: `\d` took it, the launcher's shell does not
        "PREFILL_NODES=2\u00a0",  # a no-break space is no shell blank: "2\xa0" is no count
        'PREFILL_NODES="4"',
        "PREFILL_NODES=",
        "PREFILL_NODES=$((4))",
        "PREFILL_NODES=" + "9" * 5000,
    ],
)
def test_a_node_setting_the_estimate_cannot_read_is_refused_never_priced_lower(setting) -> None:
    """Such a value was ignored: the job was priced at the nodes its workers fill, fewer
    than the recipe may take."""
    from infx.errors import ConfigError

    prefill = _with(MULTI["prefill"], tp=1, **{"additional-settings": [setting]})
    row = _with(MULTI, prefill=prefill, runner="gb200")
    with pytest.raises(ConfigError, match="PREFILL_NODES is not a whole number in ASCII"):
        estimate([(row, False)], node_gpus={"gb200": 4})


def test_a_row_with_the_plans_node_count_is_priced_at_it() -> None:
    """The plan's count (recipe, settings as InferenceX reads them, or topology) is what the
    job holds, whatever the settings say to the shell: plan and estimate never differ."""
    from infx.errors import ConfigError

    prefill = _with(MULTI["prefill"], **{"additional-settings": ["PREFILL_NODES=\u0663"]})
    row = _with(MULTI, prefill=prefill, **{"node-count": 5})
    (cost,) = estimate([(row, False)], node_gpus={"mi355x-disagg": 8})
    assert (cost.nodes, cost.held_gpus) == (5, 40)
    for wrong in (0, True, 2**63, "5"):
        with pytest.raises(ConfigError, match="is not a node count the estimate can price"):
            estimate([(_with(row, **{"node-count": wrong}), False)])


def test_node_sizes_come_from_runners_yaml() -> None:
    from infx.matrix.cost import node_gpus

    labels = {
        "h200": ["h200-cw_00", "h200-nb_0"],
        "gb200": ["gb200-nv_0"],
        "mixed": ["h200-cw_00", "gb200-nv_0"],
        "cluster:h200-cw": ["h200-cw_00"],
        "cluster:h200-nb": ["h200-nb_0"],
        "cluster:gb200-nv": ["gb200-nv_0"],
        "b200-nscale": ["b200-ns_0"],
    }
    hardware = {
        "cluster:h200-cw": {"available-cpu-dram-mib": 1, "gpus-per-node": 8},
        "cluster:h200-nb": {"available-cpu-dram-mib": 1, "gpus-per-node": 8},
        "cluster:gb200-nv": {"available-cpu-dram-mib": 1, "gpus-per-node": 4},
        "b200-nscale": {"available-cpu-dram-mib": 1, "gpus-per-node": 8},
    }
    sizes = node_gpus(labels, hardware)
    assert sizes["h200"] == 8 and sizes["gb200"] == 4 and sizes["b200-nscale"] == 8
    assert sizes["cluster:gb200-nv"] == 4
    assert "mixed" not in sizes  # its nodes disagree: the default applies


def test_the_budget_counts_held_gpu_hours_and_says_both() -> None:
    costs = estimate([(_with(FIXED, tp=4), False)] * 3, node_gpus={"mi355x": 8})
    within = verdict(costs, "full-sweep-enabled", {"full-sweep-enabled": 6})
    assert (within.gpu_hours, within.used_hours, within.over) == (6.0, 3.0, False)
    over = verdict(costs, "full-sweep-enabled", {"full-sweep-enabled": 5})
    assert over.over and over.text() == (
        "over budget: 6.0 of 5.0 GPU-hours for label full-sweep-enabled "
        "(whole nodes; servers use 3.0)"
    )
    from infx.matrix.cost import estimate_document

    doc = estimate_document(costs, over, {})
    assert (doc["gpu-hours"], doc["gpu-hours-used"]) == (6.0, 3.0)
    assert {k: doc["jobs"][0][k] for k in ("gpus", "gpus-held", "gpu-hours", "gpu-hours-used")} == {
        "gpus": 4,
        "gpus-held": 8,
        "gpu-hours": 2.0,
        "gpu-hours-used": 1.0,
    }


def test_wall_time_counts_the_nodes_a_job_holds() -> None:
    gb = _with(FIXED, runner="gb200", tp=8)  # 8 GPUs on 4-GPU nodes: two nodes
    costs = estimate([(gb, False)] * 2, node_gpus={"gb200": 4})
    assert wall_minutes(costs, {"gb200": 2})["gb200"] == 30


def test_a_prs_runner_sizes_only_ever_raise_the_price() -> None:
    """The base vouches for its labels' nodes (an unsized label: 8 GPUs); the head may say
    more, never less, and a label only the head knows counts 8 at least (the rerun's
    planning job prices a PR's lineage the same way)."""
    base = {"mi355x": 8, "cluster:gb300-nv": 4}
    head = {"mi355x": 1, "cluster:gb300-nv": 4, "new-pool": 2, "big": 16}
    assert priced_sizes(head, base) == {
        "mi355x": 8,
        "cluster:gb300-nv": 4,
        "new-pool": 8,
        "big": 16,
    }
    assert priced_sizes({}, {}) == {}
    assert priced_sizes({"x": 4}, {}) == {"x": 8}
