"""Paired repeats (issue #32 item 3): each PR row a repeat measures again gets main's row of
the same config as its partner, both pinned to one node, their order alternating pair by
pair, both priced."""

from __future__ import annotations

from infx.matrix.rows import row_id
from infx.matrix.timings import JobSlot
from infx.rerun.paired import (
    BASE,
    PR,
    base_rows,
    config_key,
    document,
    paired_pins,
    pairs,
    source_nodes,
)
from infx.rerun.rules import JobOutcome
from tests.results.formats import fixed_row

MAIN_IMAGE = "vllm/vllm-openai-rocm:v0.10.0"
POOLS = {"mi355x": ["node-a", "node-b"]}


def pr_row(conc: int) -> dict:
    return fixed_row(conc=conc, tp=8)


def main_row(conc: int) -> dict:
    return fixed_row(conc=conc, tp=8, image=MAIN_IMAGE, **{"recipe-fingerprint": "cd" * 32})


def outcome(row: dict, node: str, kind: str | None = None) -> JobOutcome:
    return JobOutcome(JobSlot("b", 0, 0), row, "success" if kind is None else "failure", kind, node)


def test_main_s_row_of_the_config_is_the_partner_whatever_its_recipe() -> None:
    assert config_key(pr_row(16), False) == config_key(main_row(16), False)
    assert config_key(pr_row(16), False) != config_key(pr_row(32), False)
    base = base_rows([(main_row(16), False), (main_row(32), False)])
    (pair,) = pairs([(pr_row(16), False)], base, {}, POOLS)
    assert pair.base == main_row(16) and pair.pr == pr_row(16)


def test_both_halves_run_on_the_node_that_measured_the_pr_row() -> None:
    nodes = source_nodes([outcome(pr_row(16), "node-b"), outcome(pr_row(32), "node-a", "infra")])
    assert nodes == {row_id(pr_row(16)): "node-b"}  # a failed job's node is no evidence
    base = base_rows([(main_row(16), False), (main_row(32), False)])
    found = pairs([(pr_row(16), False), (pr_row(32), False)], base, nodes, POOLS)
    assert [p.node for p in found] == ["node-b", "node-a"]  # the second: the pool's turn
    pins = paired_pins(found)
    assert pins[row_id(pr_row(16))] == pins[row_id(main_row(16))] == "node-b"
    assert pins[row_id(pr_row(32))] == pins[row_id(main_row(32))] == "node-a"


def test_pairs_without_a_known_node_spread_over_the_pool_each_on_one_node() -> None:
    base = base_rows([(main_row(c), False) for c in (4, 8, 16)])
    found = pairs([(pr_row(c), False) for c in (4, 8, 16)], base, {}, POOLS)
    assert [p.node for p in found] == ["node-a", "node-b", "node-a"]
    assert pairs([(pr_row(4), False)], base, {}, {})[0].node == ""
    assert paired_pins(pairs([(pr_row(4), False)], base, {}, {})) == {}


def test_the_order_alternates_pair_by_pair() -> None:
    base = base_rows([(main_row(c), False) for c in (4, 8, 16)])
    found = pairs([(pr_row(c), False) for c in (4, 8, 16)], base, {}, POOLS)
    assert [p.order for p in found] == [(PR, BASE), (BASE, PR), (PR, BASE)]
    assert [d["order"] for d in document(found)] == [["pr", "base"], ["base", "pr"], ["pr", "base"]]


def test_a_config_main_does_not_plan_runs_alone() -> None:
    base = base_rows([(main_row(16), False)])
    found = pairs([(pr_row(16), False), (pr_row(64), False)], base, {}, POOLS)
    assert found[1].base is None and found[1].order == (PR,)
    assert document(found)[1]["base"] is None
    assert row_id(pr_row(64)) in paired_pins(found)


def test_main_s_rows_join_the_plan_beside_their_pr_rows_in_the_pair_s_order() -> None:
    from infx.rerun.paired import with_partners
    from infx.rerun.rules import jobs_of, subset, whole_plan
    from tests.rerun.test_rules import plan_of

    whole = whole_plan(plan_of(concs=(4, 8, 16), evals=False))
    kept = subset(whole, [row_id(pr_row(c)) for c in (4, 8, 16)])
    base = base_rows([(main_row(c), False) for c in (4, 8)])
    found = pairs(jobs_of(kept), base, {}, POOLS)
    planned = [row["image"] for row, _ in jobs_of(with_partners(kept, found))]
    pr_image = pr_row(4)["image"]
    # conc 4: PR then main; conc 8: main then PR; conc 16: main plans none, alone.
    assert planned == [pr_image, MAIN_IMAGE, MAIN_IMAGE, pr_image, pr_image]
    assert [row["conc"] for row, _ in jobs_of(kept)] == [4, 8, 16]  # the input is kept


def test_a_canary_s_partner_heads_its_bucket() -> None:
    from infx.rerun.paired import with_partners
    from infx.rerun.rules import jobs_of, subset, whole_plan
    from tests.rerun.test_rules import plan_of

    whole = whole_plan(plan_of(concs=(4, 8), evals=False))
    kept = subset(whole, [row_id(pr_row(c)) for c in (4, 8)])
    rows = kept["single_node"]["1k1k"]
    split = {"canary": [rows[0]], "remaining": subset(kept, [row_id(rows[1])])}
    base = base_rows([(main_row(c), False) for c in (4, 8)])
    found = pairs(jobs_of(kept), base, {}, POOLS)
    out = with_partners(split, found)
    assert out["canary"] == [pr_row(4)]
    assert out["remaining"]["single_node"]["1k1k"] == [main_row(4), main_row(8), pr_row(8)]


def test_a_row_main_plans_unchanged_runs_once_alone() -> None:
    """The PR left the config as main has it: main's half would be the same job again (its
    point collects as the PR's), so it is neither planned, pinned nor priced twice."""
    from infx.rerun.paired import with_partners
    from infx.rerun.rules import jobs_of, subset, whole_plan
    from tests.rerun.test_rules import plan_of

    whole = whole_plan(plan_of(concs=(4, 8), evals=False))
    kept = subset(whole, [row_id(pr_row(c)) for c in (4, 8)])
    base = base_rows([(pr_row(4), False), (main_row(8), False)])  # conc 4: main's row as is
    found = pairs(jobs_of(kept), base, {}, POOLS)
    assert found[0].base is None and found[0].order == (PR,)
    assert found[1].base == main_row(8)
    assert document(found)[0]["base"] is None
    planned = [row for row, _ in jobs_of(with_partners(kept, found))]
    assert planned.count(pr_row(4)) == 1 and len(planned) == 3
