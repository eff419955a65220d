"""A results table is typed once (infx/results/table/rows.py) from the schemas it is read and
written by: each type has the keys of its part of schemas/result.schema.json and requires
what the schema requires, and results.csv's columns are the row's parts, flattened."""

from __future__ import annotations

import re
from typing import Any

from infx import schemas
from infx.results.table.rows import (
    Accuracy,
    Gpus,
    Identity,
    Recipe,
    Row,
    RunInfo,
    Table,
    Worker,
    config_identity,
)


def schema() -> dict[str, Any]:
    return schemas.load("result")


def definition(name: str) -> dict[str, Any]:
    found: dict[str, Any] = schema()["$defs"][name]
    return found


def test_each_part_of_a_row_has_the_schema_s_keys_and_requires_what_it_requires() -> None:
    for kind, name in ((Worker, "worker"), (Recipe, "recipe"), (Gpus, "gpus")):
        part = definition(name)
        assert set(kind.__annotations__) == set(part["properties"]), name
        assert kind.__required_keys__ == set(part["required"]), name
    scores = definition("accuracy")
    assert set(Accuracy.__annotations__) == set(scores["properties"])
    assert Accuracy.__required_keys__ == set(scores["required"])
    row = definition("row")
    assert set(Row.__annotations__) == set(row["properties"])
    assert Row.__required_keys__ == set(row["required"])


def test_an_identity_requires_all_but_its_concurrency() -> None:
    """A row's identity names a point; the same without `conc` names its config."""
    identity = definition("identity")
    assert set(Identity.__annotations__) == set(identity["properties"])
    assert Identity.__required_keys__ == set(identity["required"]) - {"conc"}
    assert "conc" in identity["required"]


def test_the_document_and_its_run_follow_the_schema() -> None:
    top = schema()
    assert set(Table.__annotations__) == set(top["properties"])
    assert Table.__required_keys__ == set(top["required"])
    assert set(RunInfo.__annotations__) == set(top["properties"]["run"]["properties"])
    assert RunInfo.__required_keys__ == set(top["properties"]["run"].get("required", []))


def test_results_csv_columns_are_the_row_flattened() -> None:
    """results.csv's columns: kind and client, the identity (worker blocks one column per
    field), image, exp-name and fingerprint of the recipe, the GPUs, the source, every
    metric, and an accuracy score's fields."""
    columns = set(schemas.load("results-csv")["properties"])
    identity = set(Identity.__annotations__) - {"prefill", "decode"}
    workers = {f"{role}-{key}" for role in ("prefill", "decode") for key in Worker.__annotations__}
    gpus = {"gpus", "prefill-gpus", "decode-gpus"}
    flat = {"kind", "client", "source", "image", "exp-name", "recipe-fingerprint"}
    scores = set(Accuracy.__annotations__)
    metrics = columns - identity - workers - gpus - flat - scores
    assert identity | workers | gpus | flat | scores <= columns
    named = set(definition("metrics")["properties"])
    (pattern,) = definition("metrics")["patternProperties"]
    assert named <= metrics
    assert all(re.fullmatch(pattern, m) for m in metrics - named), metrics - named


def test_a_config_s_identity_is_the_point_s_without_its_concurrency() -> None:
    point: Identity = {
        "scenario": "fixed-seq-len",
        "runner": "mi355x",
        "hardware": "mi355x",
        "model": "m",
        "model-prefix": "m",
        "framework": "vllm",
        "precision": "fp8",
        "multinode": False,
        "disagg": False,
        "spec-decoding": "none",
        "conc": 4,
    }
    config = config_identity(point)
    assert "conc" not in config and point["conc"] == 4
    assert list(config) == [k for k in point if k != "conc"]
