"""A rerun's lineage keeps one honest record of what it measured (infx.matrix.manifest)."""

from __future__ import annotations

from infx.matrix.manifest import SweepOptions, build, file_digest, lineage
from infx.matrix.plan import Plan

A = {"runner": "mi355x", "model-prefix": "a", "precision": "fp8", "framework": "vllm"}
B = {"runner": "mi355x", "model-prefix": "b", "precision": "fp8", "framework": "vllm"}
ROWS = [{**A, "conc": 4}, {**A, "conc": 8}, {**B, "conc": 4}]
NODES = {"mi355x": ["mi355x-amds_01", "mi355x-amds_02"]}
FILES = {
    "recipes/a_fp8_mi355x_vllm.sh": file_digest(b"echo a\n"),
    "recipes/b_fp8_mi355x_vllm.sh": file_digest(b"echo b\n"),
    ".github/workflows/benchmark-tmpl.yml": file_digest(b"jobs: {}\n"),
}


def source() -> dict:
    plan = Plan(
        {
            "single_node": {"1k1k": ROWS},
            "multi_node": {},
            "evals": [],
            "agentic_evals": [],
            "multinode_evals": [],
            "multinode_agentic_evals": [],
        },
        ["a", "b"],
    )
    options = SweepOptions("pull_request", "full-sweep-enabled", False, False, False, False, True)
    return build(plan, {"a": {"x": 1}, "b": {"x": 2}}, NODES, FILES, options)


def test_nothing_changed_is_the_source_s_record() -> None:
    record = source()
    assert lineage(record, FILES, ROWS, ROWS[:1], NODES) == record


def test_a_recipe_fixed_and_every_row_running_it_again_stays_reusable() -> None:
    fixed = {**FILES, "recipes/a_fp8_mi355x_vllm.sh": file_digest(b"echo a, fixed\n")}
    record = lineage(source(), fixed, ROWS, ROWS[:2], NODES)
    assert record["sweep"]["reusable"] is True
    assert record["digest"] != source()["digest"]  # it now records the fixed recipe
    assert record["measured"]["configs"] == source()["measured"]["configs"]


def test_a_row_that_read_the_old_recipe_makes_the_lineage_not_reusable() -> None:
    fixed = {**FILES, "recipes/a_fp8_mi355x_vllm.sh": file_digest(b"echo a, fixed\n")}
    assert lineage(source(), fixed, ROWS, ROWS[:1], NODES)["sweep"]["reusable"] is False
    # Rows of another recipe need not run again.
    assert lineage(source(), fixed, ROWS, ROWS[:2], NODES)["sweep"]["reusable"] is True


def test_a_changed_job_file_touches_every_row() -> None:
    template = {
        **FILES,
        ".github/workflows/benchmark-tmpl.yml": file_digest(b"jobs: {changed: 1}\n"),
    }
    assert lineage(source(), template, ROWS, ROWS[:2], NODES)["sweep"]["reusable"] is False
    assert lineage(source(), template, ROWS, ROWS, NODES)["sweep"]["reusable"] is True
