"""Access to the JSON Schemas in `schemas/`, one per file format."""

from __future__ import annotations

import json
from functools import cache
from pathlib import Path
from typing import Any

from jsonschema import Draft202012Validator
from jsonschema.exceptions import ValidationError

_HERE = Path(__file__).resolve().parent
# Installed wheels carry the schemas inside the package; a source checkout has them at the root.
_CANDIDATES = (_HERE / "schemas", _HERE.parent / "schemas")


def schema_path(name: str) -> Path:
    for folder in _CANDIDATES:
        path = folder / f"{name}.schema.json"
        if path.is_file():
            return path
    raise FileNotFoundError(f"schema {name!r} is not installed")


@cache
def validator(name: str) -> Draft202012Validator:
    schema = json.loads(schema_path(name).read_text(encoding="utf-8"))
    Draft202012Validator.check_schema(schema)
    return Draft202012Validator(schema)


def errors(name: str, instance: Any) -> list[ValidationError]:
    """All schema errors, ordered by where they sit in the instance."""
    found = list(validator(name).iter_errors(instance))
    return sorted(found, key=lambda e: [str(p) for p in e.absolute_path])


def describe(error: ValidationError) -> str:
    """A one-line message naming the failing field, for humans."""
    where = ".".join(str(p) for p in error.absolute_path) or "entry"
    if error.validator == "additionalProperties":
        allowed = sorted(error.schema.get("properties", {}))
        extra = (
            sorted(set(error.instance) - set(allowed)) if isinstance(error.instance, dict) else []
        )
        return (
            f"{where}: unknown key(s) {', '.join(map(str, extra))}; allowed: {', '.join(allowed)}"
        )
    if error.validator == "not" and error.schema.get("description"):
        return f"{where}: {error.schema['description']}"
    if error.validator == "not" and error.parent is None:
        return f"{where}: {error.message}"
    return f"{where}: {error.message}"
