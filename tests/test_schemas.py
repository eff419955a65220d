"""Every schema in schemas/ is a valid 2020-12 schema, and the project's own data validates."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from jsonschema import Draft202012Validator

from infx import schemas
from infx.changelog.parse import validate_document
from tests.conftest import SHARED

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
    assert validate_document((ROOT / "perf-changelog.yaml").read_bytes()) == []


# Keywords fastjsonschema's draft-07 code generator understands; a schema in FAST_CHECKED
# that used anything else (unevaluatedProperties, dependentRequired, ...) would be checked
# loosely by the fast path.
DRAFT7_KEYWORDS = {
    "$schema", "$id", "$ref", "$defs", "definitions", "title", "description", "type",
    "properties", "required", "additionalProperties", "items", "minItems", "maxItems",
    "minLength", "maxLength", "minimum", "maximum", "enum", "const", "pattern", "if",
    "then", "else", "not", "anyOf", "allOf", "oneOf", "propertyNames", "uniqueItems",
}  # fmt: skip


def _keywords(node: object, inside_properties: bool = False) -> set[str]:
    found: set[str] = set()
    if isinstance(node, dict):
        for key, value in node.items():
            if not inside_properties:
                found.add(key)
            found |= _keywords(value, key in ("properties", "$defs", "definitions"))
    elif isinstance(node, list):
        for value in node:
            found |= _keywords(value)
    return found


@pytest.mark.parametrize("name", sorted(schemas.FAST_CHECKED))
def test_fast_checked_schemas_use_draft7_keywords_only(name: str) -> None:
    assert _keywords(schemas.load(name)) <= DRAFT7_KEYWORDS


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


@given(entries)
@settings(max_examples=400, deadline=None)
def test_fast_and_full_validators_agree(entry: dict) -> None:
    full = schemas.validator("perf-changelog").is_valid(entry)
    assert schemas.is_valid("perf-changelog", entry) is full
    assert (schemas.errors("perf-changelog", entry) == []) is full


@pytest.mark.skipif(not (SHARED / "perf-changelog.yaml").is_file(), reason="no ../shared")
def test_validators_agree_on_the_real_history() -> None:
    from infx.yamlio import strict_loader

    for entry in strict_loader().load((SHARED / "perf-changelog.yaml").read_bytes()):
        assert schemas.is_valid("perf-changelog", entry)
        assert schemas.validator("perf-changelog").is_valid(entry)
