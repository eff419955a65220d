"""Byte-level rules and entry parsing for a region of perf-changelog.yaml.

Everything here works on bytes plus the 1-based line number at which the
region starts, so a check can look at appended bytes alone and still report
head-file line numbers.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any

from ruamel.yaml.error import YAMLError

from infx import schemas
from infx.changelog import ENTRY_START
from infx.changelog.model import Entry, Violation, clip
from infx.yamlio import line_loader, strict_loader, yaml_error_line, yaml_error_text

_CONFLICT = re.compile(rb"^(<<<<<<<|=======|>>>>>>>|\|\|\|\|\|\|\|)(?: |$)", re.M)
_BAD_BYTES = (
    (b"\r", "carriage return (CR)", "save the file with LF line endings"),
    (b"\t", "tab", "indent with spaces"),
    (b"\0", "NUL byte", "remove the NUL byte"),
)
_MAX_SAME = 5


def _line_at(data: bytes, offset: int, first_line: int) -> int:
    return first_line + data.count(b"\n", 0, offset)


def byte_violations(data: bytes, first_line: int = 1) -> list[Violation]:
    """Encoding, control characters and conflict markers; cheap C-level scans."""
    found: list[Violation] = []
    try:
        data.decode("utf-8")
    except UnicodeDecodeError as exc:
        found.append(
            Violation(
                _line_at(data, exc.start, first_line),
                "encoding",
                f"not valid UTF-8 (byte 0x{data[exc.start]:02x})",
                "save the file as UTF-8",
            )
        )
    for needle, name, fix in _BAD_BYTES:
        pos, count = data.find(needle), 0
        while pos != -1 and count < _MAX_SAME:
            found.append(
                Violation(
                    _line_at(data, pos, first_line), "characters", f"{name} is not allowed", fix
                )
            )
            pos, count = data.find(needle, pos + 1), count + 1
    for match in _CONFLICT.finditer(data):
        found.append(
            Violation(
                _line_at(data, match.start(), first_line),
                "conflict-marker",
                "merge-conflict marker left in the file",
                "resolve the conflict (infx changelog resolve-conflict)",
            )
        )
    return found


def ending_violations(head: bytes) -> list[Violation]:
    """The file ends with exactly one newline (looks at the last line only)."""
    if not head:
        return []
    if not head.endswith(b"\n"):
        return [
            Violation(
                head.count(b"\n") + 1,
                "file-ending",
                "the file does not end with a newline",
                "add one newline at the end",
            )
        ]
    last_start = head.rfind(b"\n", 0, len(head) - 1) + 1
    if not head[last_start:-1].strip(b" "):
        return [
            Violation(
                head.count(b"\n"),
                "file-ending",
                "the file ends with blank lines",
                "end the file with exactly one newline after the last entry",
            )
        ]
    return []


@dataclass(frozen=True)
class Chunk:
    """The bytes of one entry, from its `- config-keys:` line to the next entry."""

    text: bytes
    line: int


def split_entries(data: bytes, first_line: int = 1) -> tuple[list[Chunk], list[Violation]]:
    """Cut a region into entries at `- config-keys:` lines; flag other top-level lines."""
    chunks: list[Chunk] = []
    found: list[Violation] = []
    lines = data.split(b"\n")
    start: int | None = None
    offset = 0
    start_offset = 0
    for index, line in enumerate(lines):
        if line == ENTRY_START:
            if start is not None:
                chunks.append(Chunk(data[start_offset:offset], first_line + start))
            start, start_offset = index, offset
        elif line[:1] not in (b"", b" ", b"\t", b"#"):
            found.append(
                Violation(
                    first_line + index,
                    "entry-start",
                    f"top-level line {clip(line)!r} is not an entry start",
                    "every entry starts with a line '- config-keys:'",
                )
            )
        offset += len(line) + 1
    if start is not None:
        chunks.append(Chunk(data[start_offset:], first_line + start))
    return chunks, found


def _plain(node: Any) -> Any:
    if isinstance(node, dict):
        return {str(k) if not isinstance(k, str) else k: _plain(v) for k, v in node.items()}
    if isinstance(node, list):
        return [_plain(v) for v in node]
    return node


def _yaml_fix(message: str) -> str:
    if "alias" in message:
        return "quote values that start with '*', e.g. - \"*-mi355x-*\""
    return "fix the entry's YAML syntax"


def parse_chunk(chunk: Chunk) -> tuple[Entry | None, list[Violation]]:
    """Parse one entry with line positions and validate it against the entry schema."""
    try:
        doc = line_loader(yaml11=False).load(chunk.text)
    except YAMLError as exc:
        rel = yaml_error_line(exc)
        line = chunk.line + rel - 1 if rel else chunk.line
        return None, [
            Violation(
                line,
                "yaml",
                f"invalid YAML: {yaml_error_text(exc)}",
                _yaml_fix(yaml_error_text(exc)),
            )
        ]
    if not isinstance(doc, list) or len(doc) != 1 or not isinstance(doc[0], dict):
        return None, [
            Violation(
                chunk.line,
                "entry-shape",
                "an entry must be one mapping",
                "write the entry as '- config-keys: ...' with its fields below",
            )
        ]
    node = doc[0]
    entry = Entry(data=_plain(node), line=chunk.line, text=chunk.text)
    for key in node:
        k_line, _ = node.lc.key(key)
        v_line, v_col = node.lc.value(key)
        entry.key_lines[str(key)] = chunk.line + k_line
        entry.value_pos[str(key)] = (chunk.line + v_line, v_col)
        value = node[key]
        if isinstance(value, list) and hasattr(value, "lc"):
            entry.item_lines[str(key)] = [
                chunk.line + value.lc.item(i)[0] for i in range(len(value))
            ]
    return entry, schema_violations(entry)


def schema_violations(entry: Entry) -> list[Violation]:
    found = []
    for error in schemas.errors("perf-changelog", entry.data):
        path = list(error.absolute_path)
        line = entry.line_of(str(path[0])) if path else entry.line
        if error.validator == "additionalProperties" and isinstance(error.instance, dict):
            extra = [k for k in error.instance if k not in error.schema.get("properties", {})]
            line = entry.line_of(str(extra[0])) if extra else line
        message = schemas.describe(error)
        if message is not None:
            found.append(
                Violation(line, "schema", message, "see schemas/perf-changelog.schema.json")
            )
    return found


def parse_region(data: bytes, first_line: int = 1) -> tuple[list[Entry], list[Violation]]:
    """Split, parse and schema-check every entry of a region."""
    chunks, found = split_entries(data, first_line)
    entries: list[Entry] = []
    for chunk in chunks:
        entry, problems = parse_chunk(chunk)
        found.extend(problems)
        if entry is not None:
            entries.append(entry)
    return entries, found


def validate_document(data: bytes) -> list[Violation]:
    """Every rule that applies to a whole file on its own (no base to compare against).

    Entries are loaded with the C parser and only re-parsed for positions when
    they fail, so a full 772-entry history is checked in well under a second.
    """
    found = byte_violations(data) + ending_violations(data)
    if any(v.rule == "encoding" for v in found):
        return sorted(found)
    chunks, problems = split_entries(data)
    found.extend(problems)
    if not chunks and data.strip():
        found.append(
            Violation(
                1,
                "root",
                "the changelog must be a YAML list of entries",
                "start each entry with '- config-keys:'",
            )
        )
    loader = strict_loader()
    for chunk in chunks:
        try:
            doc = loader.load(chunk.text)
        except YAMLError:
            doc = None
        if (
            isinstance(doc, list)
            and len(doc) == 1
            and isinstance(doc[0], dict)
            and not schemas.errors("perf-changelog", doc[0])
        ):
            continue
        found.extend(parse_chunk(chunk)[1])
    return sorted(found, key=lambda v: (v.line or 0, v.rule))
