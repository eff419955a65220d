"""Every schema in schemas/ is a valid 2020-12 schema, and the project's own data validates."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from jsonschema import Draft202012Validator

from infx.changelog.parse import validate_document

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
