"""Matrix rows are typed once, from the schema the workflows read them by, and checked
against it where they enter: a plan file, a canary split, an artifact's sweep.json."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from infx import schemas
from infx.errors import UsageError
from infx.matrix.rows import MatrixRow, PlanEntry, Worker, checked_plan, empty_plan, read_plan
from tests.results.formats import fixed_row

ROW_SHAPES = ("singleNodeRow", "agenticSingleNodeRow", "multiNodeRow", "agenticMultiNodeRow")


def definitions() -> dict[str, Any]:
    return schemas.load("sweep-matrix")["$defs"]


def test_the_row_type_has_the_keys_of_every_row_shape_and_requires_the_common_ones() -> None:
    shapes = [definitions()[name] for name in ROW_SHAPES]
    keys = set().union(*(shape["properties"] for shape in shapes))
    common = set.intersection(*(set(shape["required"]) for shape in shapes))
    assert set(MatrixRow.__annotations__) == keys
    assert MatrixRow.__required_keys__ == common


def test_the_worker_and_entry_types_follow_the_schema() -> None:
    worker = definitions()["worker"]
    assert set(Worker.__annotations__) == set(worker["properties"])
    assert Worker.__required_keys__ == set(worker["required"])
    entries = schemas.load("sweep-matrix")["properties"]["changelog_metadata"]["properties"]
    item = entries["entries"]["items"]
    assert set(PlanEntry.__annotations__) == set(item["properties"])
    assert PlanEntry.__required_keys__ == set(item["required"])


def plan_with(row: dict[str, Any]) -> dict[str, Any]:
    return {**empty_plan(), "single_node": {"1k1k": [row]}}


def test_a_plan_and_its_canary_split_pass() -> None:
    row = fixed_row(conc=4)
    assert checked_plan(plan_with(row), "plan.json")["single_node"]["1k1k"] == [row]
    split = {"canary": [row], "remaining": empty_plan()}
    assert checked_plan(split, "plan.json") == split


@pytest.mark.parametrize(
    "payload",
    [
        [1, 2],
        plan_with({**fixed_row(), "conc": 0}),
        plan_with({k: v for k, v in fixed_row().items() if k != "image"}),
        {"canary": [{"exp-name": "x"}], "remaining": empty_plan()},
        {"canary": [], "remaining": {}},
        {"canary": [], "remaining": empty_plan(), "extra": 1},
    ],
)
def test_anything_else_is_refused_where_it_enters(payload: Any, tmp_path: Path) -> None:
    with pytest.raises(UsageError, match=r"^plan.json is not a sweep plan or canary output"):
        read_plan(json.dumps(payload), "plan.json")


def test_sweep_outputs_refuses_a_plan_that_breaks_the_schema(tmp_path: Path) -> None:
    from click.testing import CliRunner

    from infx.cli import cli

    path = tmp_path / "sweep.json"
    path.write_text(json.dumps(plan_with({**fixed_row(), "conc": "4"})))
    result = CliRunner().invoke(cli, ["sweep", "outputs", str(path)])
    assert result.exit_code == 2, result.output
    assert result.output == (
        f"infx: error: {path} is not a sweep plan or canary output: '4' is not of type 'integer'\n"
    )
