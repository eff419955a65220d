"""Schema rules of one changelog entry: each error of schemas/perf-changelog.schema.json
located at the line of the key or item it concerns, with a fix in words."""

from __future__ import annotations

from collections.abc import Mapping
from itertools import islice
from typing import TYPE_CHECKING, Any

from infx import schemas
from infx.changelog.model import MAX_PER_RULE, Entry, Violation
from infx.changelog.rules import Rule

if TYPE_CHECKING:
    from jsonschema.exceptions import ValidationError

_TYPE_FIX = {
    "boolean": "use true or false",
    "integer": "use a whole number",
    "string": "write text (quote it if YAML reads it as a number or boolean)",
    "array": "write a list, one '- item' per line",
}


def _properties(error: ValidationError) -> Mapping[str, Any]:
    """The properties the failing schema names (none when it is a boolean schema)."""
    schema = error.schema
    found = schema.get("properties", {}) if isinstance(schema, Mapping) else {}
    return found if isinstance(found, Mapping) else {}


def _schema_fix(error: ValidationError) -> str:
    kind = error.validator
    if kind == "type":
        return _TYPE_FIX.get(str(error.validator_value), "see schemas/perf-changelog.schema.json")
    if kind == "additionalProperties":
        known = list(_properties(error))
        instance = error.instance if isinstance(error.instance, dict) else {}
        extra = [str(k) for k in instance if k not in known]
        import difflib  # only for an unknown key

        close = difflib.get_close_matches(extra[0], known, n=1, cutoff=0.6) if extra else []
        if close:
            return f"did you mean {close[0]!r}?"
        return f"remove it; the keys of an entry are {', '.join(known)}"
    if kind == "required":
        return "add the missing key"
    if kind == "enum":
        allowed = error.validator_value
        return "use one of " + ", ".join(
            map(str, allowed if isinstance(allowed, list) else [allowed])
        )
    if kind in ("minItems", "minLength"):
        return "give at least one non-empty value"
    if kind == "minimum":
        return f"use a number of at least {error.validator_value}"
    if kind == "not":
        rule = error.schema if isinstance(error.schema, Mapping) else {}
        flag = "no-evals" if "no-evals" in str(rule.get("description", "")) else "append-only"
        return f"remove {flag}, or remove the eval fields"
    return "see schemas/perf-changelog.schema.json"


def schema_violations(entry: Entry) -> list[Violation]:
    if schemas.is_valid("perf-changelog", entry.data):
        return []
    errors = islice(schemas.validator("perf-changelog").iter_errors(entry.data), MAX_PER_RULE)
    found = []
    for error in sorted(errors, key=lambda e: [str(p) for p in e.absolute_path]):
        path = list(error.absolute_path)
        line = entry.line_of(str(path[0])) if path else entry.line
        if len(path) == 2:
            line = entry.item_line(str(path[0]), int(path[1]))
        if error.validator == "additionalProperties" and isinstance(error.instance, dict):
            extra = [k for k in error.instance if k not in _properties(error)]
            line = entry.line_of(str(extra[0])) if extra else line
        message = schemas.describe(error)
        if message is not None:
            found.append(Violation(line, Rule.SCHEMA, message, _schema_fix(error)))
    return found
