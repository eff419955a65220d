"""Access to the JSON Schemas in `schemas/`, one per file format."""

from __future__ import annotations

import json
from collections.abc import Mapping
from functools import cache
from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
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
def load(name: str) -> dict[str, Any]:
    """The schema as parsed JSON; a schema is always an object at its top."""
    path = schema_path(name)
    schema = json.loads(path.read_text(encoding="utf-8"))
    if not isinstance(schema, dict):
        raise ValueError(f"{path}: a JSON Schema is an object, not {type(schema).__name__}")
    return schema


@cache
def validator(name: str) -> Draft202012Validator:
    """The schema's validator for describing errors. jsonschema is imported here, not at
    start-up, and the schema is trusted (tests/test_schemas.py checks every schema against
    its meta-schema)."""
    from jsonschema import Draft202012Validator

    return Draft202012Validator(load(name))


@cache
def _verdict(name: str) -> Any:
    import jsonschema_rs

    return jsonschema_rs.validator_for(load(name))


def is_valid(name: str, instance: Any) -> bool:
    """The yes/no verdict, from jsonschema-rs: it starts in a third of jsonschema's import
    time and checks every real master config in a millisecond instead of 0.7 s.
    tests/test_schemas.py holds both engines to the same verdicts."""
    return bool(_verdict(name).is_valid(instance))


def errors(name: str, instance: Any) -> list[ValidationError]:
    """All schema errors, ordered by where they sit in the instance (none: valid)."""
    if is_valid(name, instance):
        return []
    found = list(validator(name).iter_errors(instance))
    return sorted(found, key=lambda e: [str(p) for p in e.absolute_path])


def describe(error: ValidationError, known: frozenset[str] = frozenset()) -> str | None:
    """A one-line message naming the failing field, or None when another error explains it.

    `known` lists keys valid somewhere in the schema: an unevaluated key that is known only
    looks unexpected because a sibling rule failed, and that rule's error says why.
    """
    where = ".".join(str(p) for p in error.absolute_path) or "entry"
    # A boolean schema (`false`) has no properties or description to name.
    rule = error.schema if isinstance(error.schema, Mapping) else {}
    if error.validator in ("additionalProperties", "unevaluatedProperties"):
        instance = error.instance if isinstance(error.instance, dict) else {}
        allowed = set(rule.get("properties", {}))
        extra = sorted(str(k) for k in instance if k not in allowed and k not in known)
        if not extra:
            return None
        return f"{where}: unknown key(s) {', '.join(extra)}"
    if error.validator in ("oneOf", "anyOf", "not") and rule.get("description"):
        return f"{where}: {rule['description']}"
    return f"{where}: {error.message}"


def closest(error: ValidationError) -> ValidationError:
    """The error that says what is wrong. An `anyOf` or `oneOf` that no branch matched
    says only that, with the whole instance in its message; the branch that came closest
    (fewest errors) says which field is wrong, and so on down."""
    from jsonschema.exceptions import best_match

    while error.context:
        branches: dict[object, list[ValidationError]] = {}
        for sub in error.context:
            branches.setdefault(sub.relative_schema_path[0], []).append(sub)
        nearest: list[ValidationError] = min(branches.values(), key=len)
        found = best_match(nearest)
        if found is None:
            break
        error = found
    return error


def brief(error: ValidationError, limit: int = 60) -> str:
    """The error's message with its instance cut short: a whole row or table in a message
    buries the field it names."""
    shown = repr(error.instance)
    if len(shown) <= limit:
        return error.message
    if isinstance(error.instance, dict):
        short = "{...}"
    elif isinstance(error.instance, list):
        short = "[...]"
    else:
        short = shown[: limit - 3] + "..."
    return error.message.replace(shown, short)


def known_keys(name: str) -> frozenset[str]:
    """Every property name the schema mentions, for `describe`."""
    found: set[str] = set()

    def walk(node: Any) -> None:
        if isinstance(node, dict):
            for key, value in node.items():
                if key == "properties" and isinstance(value, dict):
                    found.update(value)
                walk(value)
        elif isinstance(node, list):
            for value in node:
                walk(value)

    walk(load(name))
    return frozenset(found)
