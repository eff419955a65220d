"""A paired repeat's own table holds both halves of each pair: `halves` gives this PR's rows
to the PR's table and main's to main's, by what pairs.json says each half planned."""

from __future__ import annotations

from typing import Any

from infx.rerun.paired import base_rows, document, halves, pairs
from infx.results.ingest.process import identity, recipe
from tests.results.formats import fixed_row

MAIN_IMAGE = "vllm/vllm-openai-rocm:v0.10.0"
POOLS = {"mi355x": ["node-a"]}


def pr_row(tp: int) -> dict[str, Any]:
    return fixed_row(conc=16, tp=tp)


def main_row(tp: int) -> dict[str, Any]:
    return fixed_row(conc=16, tp=tp, image=MAIN_IMAGE, **{"recipe-fingerprint": "cd" * 32})


def measured(row: dict[str, Any], tput: float, config_key: str = "") -> dict[str, Any]:
    """The result row the job of `row` leaves (as the collected table holds it)."""
    how: dict[str, Any] = dict(recipe(row))  # type: ignore[arg-type]
    if config_key:
        how["config-key"] = config_key
    return {
        "kind": "throughput",
        "client": "vllm",
        "source": "bmk/infx-result.json",
        "identity": {**identity(row, 16), "hardware": "mi355x-node-a"},  # type: ignore[arg-type]
        "recipe": how,
        "gpus": {"total": row["tp"]},
        "metrics": {"tput_per_gpu": tput},
    }


def recorded(prs: list[dict[str, Any]], mains: list[dict[str, Any]]) -> list[dict[str, object]]:
    base = base_rows([(row, False) for row in mains])
    return document(pairs([(row, False) for row in prs], base, {}, POOLS))


def test_each_half_gets_its_own_rows() -> None:
    table = {
        "format": "infx-results/1",
        "run": {"id": 77, "sha": "a" * 40},
        "rows": [
            measured(pr_row(4), 100.0),
            measured(main_row(4), 101.0, config_key="llama70b-fp8-mi355x-vllm"),
            measured(pr_row(8), 60.0),
            measured(main_row(8), 61.0),
        ],
    }
    split = halves(table, recorded([pr_row(4), pr_row(8)], [main_row(4), main_row(8)]))  # type: ignore[arg-type]
    assert [r["metrics"]["tput_per_gpu"] for r in split.pr["rows"]] == [100.0, 60.0]
    assert [r["metrics"]["tput_per_gpu"] for r in split.base["rows"]] == [101.0, 61.0]
    assert {r["recipe"]["image"] for r in split.base["rows"]} == {MAIN_IMAGE}
    assert split.pr["run"] == split.base["run"] == {"id": 77, "sha": "a" * 40}
    assert (split.pairs, split.shared) == (2, 0)


def test_a_config_main_does_not_plan_and_a_failed_main_half_leave_the_pr_s_rows_alone() -> None:
    table = {
        "format": "infx-results/1",
        "rows": [measured(pr_row(4), 100.0), measured(pr_row(2), 90.0)],
    }
    split = halves(table, recorded([pr_row(4), pr_row(2)], [main_row(4)]))  # type: ignore[arg-type]
    assert len(split.pr["rows"]) == 2 and split.base["rows"] == []
    assert split.pairs == 0  # main's half of tp 4 left no row: no pair to judge


def test_one_recipe_on_both_sides_stays_the_pr_s() -> None:
    """infx plans no such pair any more (tests/rerun/test_paired.py), but a pairs.json
    written before, by a repeat in flight at the upgrade, may hold one."""
    same = pr_row(4)
    table = {"format": "infx-results/1", "rows": [measured(same, 100.0)]}
    assert recorded([same], [same])[0]["base"] is None
    older = [{"node": "node-a", "order": ["pr", "base"], "eval": False, "pr": same, "base": same}]
    split = halves(table, older)  # type: ignore[arg-type]
    assert len(split.pr["rows"]) == 1 and split.base["rows"] == []
    assert (split.pairs, split.shared) == (0, 1)


def test_a_row_no_pair_planned_is_kept_apart() -> None:
    canary = fixed_row(conc=1, tp=2)  # a canary due first, of a config nobody asked for
    table = {
        "format": "infx-results/1",
        "rows": [measured(pr_row(4), 100.0), measured(canary, 9.0)],
    }
    split = halves(table, recorded([pr_row(4)], [main_row(4)]))  # type: ignore[arg-type]
    assert [r["metrics"]["tput_per_gpu"] for r in split.pr["rows"]] == [100.0]
    assert [r["metrics"]["tput_per_gpu"] for r in split.other["rows"]] == [9.0]


def test_no_pairs_leave_the_table_as_it_is() -> None:
    table = {"format": "infx-results/1", "rows": [measured(pr_row(4), 100.0)]}
    split = halves(table, [])  # type: ignore[arg-type]
    assert split.pr == table and split.base["rows"] == []
