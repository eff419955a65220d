"""Render a check verdict as text, JSON, GitHub annotations and a step-summary section."""

from __future__ import annotations

import json
from typing import Any

from infx.changelog.check import CheckResult
from infx.changelog.model import Violation
from infx.errors import printable
from infx.markdown import bold, code, table, text


def _escape_data(text: str) -> str:
    """An annotation's message: GitHub's own escapes for `%` and line breaks, and every
    other control character shown as `\\x1b` and the like, as infx prints errors."""
    return printable(text.replace("%", "%25").replace("\r", "%0D").replace("\n", "%0A"))


def _escape_property(text: str) -> str:
    return _escape_data(text).replace(":", "%3A").replace(",", "%2C")


def location(path: str, violation: Violation) -> str:
    """`path:line:column` as compilers print it, as much of it as is known."""
    if violation.line is None:
        return path
    column = f":{violation.column}" if violation.column else ""
    return f"{path}:{violation.line}{column}"


def annotation(path: str, violation: Violation) -> str:
    props = [f"file={_escape_property(path)}"]
    if violation.line:
        props.append(f"line={violation.line}")
    if violation.line and violation.column:
        props.append(f"col={violation.column}")
    props.append(f"title={_escape_property('perf-changelog: ' + violation.rule)}")
    return f"::error {','.join(props)}::{_escape_data(violation.text())}"


def render(fmt: str, path: str, result: CheckResult) -> str:
    """The verdict in the format asked for: text, json or github."""
    return {"text": as_text, "json": as_json, "github": as_github}[fmt](path, result)


def as_failure(fmt: str, path: str, message: str) -> str:
    """The gate could not run: said in the format a machine reads (json or github)."""
    if fmt == "json":
        return json.dumps({"ok": False, "file": path, "error": message, "violations": []}, indent=2)
    props = f"file={_escape_property(path)},title={_escape_property('perf-changelog gate')}"
    return f"::error {props}::{_escape_data('the gate could not run: ' + message)}"


def as_text(path: str, result: CheckResult) -> str:
    if result.ok:
        return f"{path}: ok ({_what(result)})"
    lines = [f"{location(path, v)}: {v.rule}: {v.text()}" for v in result.violations]
    lines.append(f"{path}: {len(result.violations)} problem(s) found")
    return "\n".join(lines)


def as_github(path: str, result: CheckResult) -> str:
    if result.ok:
        return f"{path}: ok ({_what(result)})"
    return "\n".join(annotation(path, v) for v in result.violations)


def as_json(path: str, result: CheckResult) -> str:
    payload: dict[str, Any] = {
        "ok": result.ok,
        "file": path,
        "kind": result.diff.kind,
        "violations": [
            {
                "line": v.line,
                "column": v.column,
                "rule": v.rule,
                "message": v.message,
                "fix": v.fix,
            }
            for v in result.violations
        ],
        "entries": [
            {
                "line": e.line,
                "config-keys": e.data.get("config-keys"),
                "pr-link": e.data.get("pr-link"),
                "description": e.data.get("description"),
            }
            for e in result.entries
        ],
        "corrections": [{"line": c.line, "old": c.old, "new": c.new} for c in result.corrections],
    }
    return json.dumps(payload, indent=2, default=str)


def _what(result: CheckResult) -> str:
    kind = result.diff.kind
    if kind == "append":
        return f"{len(result.region_entries)} appended entr{'y' if len(result.region_entries) == 1 else 'ies'}"
    if kind == "correction":
        return f"{len(result.corrections)} pr-link correction(s)"
    return "no change"


def _joined(value: Any) -> str:
    return ", ".join(map(str, value)) if isinstance(value, list) else str(value)


def summary_markdown(path: str, result: CheckResult) -> str:
    """The gate's step summary: every value from the changelog through infx.markdown."""
    verdict = "passed" if result.ok else f"failed with {len(result.violations)} problem(s)"
    out = [f"### perf-changelog gate: {text(verdict)}", ""]
    if result.entries:
        rows = [
            [e.line, _joined(e.data.get("config-keys")), _joined(e.data.get("pr-link"))]
            for e in result.entries
        ]
        out += [table(["line", "config-keys", "pr-link"], rows).rstrip("\n"), ""]
    if result.corrections:
        out += [
            f"- line {c.line:d}: pr-link corrected to {code(c.new)}" for c in result.corrections
        ]
        out.append("")
    if result.violations:
        out += [
            f"- {code(location(path, v))} {bold(v.rule)}: {text(v.text())}"
            for v in result.violations
        ]
        out.append("")
    if not result.entries and not result.corrections and result.ok:
        out += [f"{text(path)} is unchanged.", ""]
    return "\n".join(out) + "\n"
