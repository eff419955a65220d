"""Every schema in schemas/ is a valid 2020-12 schema, and the project's own data validates."""

from __future__ import annotations

import gzip
import json
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from jsonschema import Draft202012Validator

from infx import schemas
from infx.changelog.parse import read_document
from infx.matrix.load import load_yaml
from tests.conftest import SHARED, load_yaml12

SCENARIOS = ["fixed-seq-len", "agentic-coding"]

ROOT = Path(__file__).resolve().parents[1]


@pytest.mark.parametrize(
    "path", sorted((ROOT / "schemas").glob("*.schema.json")), ids=lambda p: p.name
)
def test_schema_is_valid(path: Path) -> None:
    schema = json.loads(path.read_text())
    assert schema["$schema"] == "https://json-schema.org/draft/2020-12/schema"
    Draft202012Validator.check_schema(schema)


def test_own_changelog_is_valid() -> None:
    assert read_document((ROOT / "perf-changelog.yaml").read_bytes())[1] == []


values = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(-2, 3),
    st.text(max_size=3),
    st.lists(st.one_of(st.text(max_size=3), st.integers(0, 2), st.sampled_from(SCENARIOS))),
    st.sampled_from(SCENARIOS),
)
KEYS = ["config-keys", "description", "pr-link", "evals-only", "all-evals", "append-only",
        "eval-min-prefill-ep", "scenario-type", "other"]  # fmt: skip
entries = st.dictionaries(st.sampled_from(KEYS), values, max_size=len(KEYS))


def _agree(name: str, instance: object) -> bool:
    """jsonschema-rs (the verdict) and jsonschema (the messages) say the same; returns it."""
    full = schemas.validator(name).is_valid(instance)
    assert schemas.is_valid(name, instance) is full
    assert (schemas.errors(name, instance) == []) is full
    return full


@given(entries)
@settings(max_examples=400, deadline=None)
def test_both_engines_agree_on_changelog_entries(entry: dict) -> None:
    _agree("perf-changelog", entry)


def _mutations(node: object, path: tuple = ()) -> list[tuple[tuple, object]]:
    """(path, replacement) for every place in a config: wrong types, unknown keys, removals."""
    found: list[tuple[tuple, object]] = []
    if isinstance(node, dict):
        found.append(((*path, "unknown-key"), 1))
        for key, value in node.items():
            found.append(((*path, key), None))
            found.append(((*path, key), "text"))
            found.append(((*path, key), -1))
            found += _mutations(value, (*path, key))
    elif isinstance(node, list) and node:
        found.append(((*path, 0), {"odd": True}))
        found += _mutations(node[0], (*path, 0))
    return found


def _mutated(config: dict, path: tuple, value: object) -> dict:
    copy = json.loads(json.dumps(config))
    target = copy
    for step in path[:-1]:
        target = target[step]
    if value is None and isinstance(target, dict):
        target.pop(path[-1], None)
    else:
        target[path[-1]] = value
    return copy


def test_both_engines_agree_on_master_config_mutations() -> None:
    from tests.matrix.conftest import AMD

    configs = load_yaml(AMD)
    verdicts = set()
    for key, config in configs.items():
        for path, value in _mutations(config):
            verdicts.add(_agree("master-config", {key: _mutated(config, path, value)}))
    assert verdicts == {True, False}


@pytest.mark.skipif(not (SHARED / "perf-changelog.yaml").is_file(), reason="no ../shared")
def test_both_engines_accept_the_real_data() -> None:
    for entry in load_yaml12((SHARED / "perf-changelog.yaml").read_bytes()):
        assert _agree("perf-changelog", entry)
    for name in ("amd-master.yaml", "nvidia-master.yaml"):
        assert _agree("master-config", load_yaml((SHARED / "configs" / name).read_bytes()))
    assert _agree("runners", load_yaml((SHARED / "configs" / "runners.yaml").read_bytes()))
    for plan in sorted((SHARED / "plans").glob("*.plan.json.gz")):
        assert _agree("sweep-matrix", json.loads(gzip.decompress(plan.read_bytes())))
