"""Entry parsing for a region of perf-changelog.yaml: cut into entries, scan, load, check.

Everything here works on bytes plus the 1-based line number at which the
region starts, so a check can look at appended bytes alone and still report
head-file line numbers. The rules on raw bytes are in `text_rules`, the schema's
in `schema_rules`.

Hostile input is refused before anything is built: the parser's events are
scanned first (flat, in C), and an entry holding an alias, an anchor, a tag,
a merge key or deep nesting is never composed, constructed or validated.
"""

from __future__ import annotations

import re
import sys
import warnings
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, Protocol

from ruamel.yaml import cyaml
from ruamel.yaml.cyaml import CSafeLoader
from ruamel.yaml.error import MantissaNoDotYAML1_1Warning, MarkedYAMLError, YAMLError
from ruamel.yaml.events import (
    AliasEvent,
    MappingEndEvent,
    MappingStartEvent,
    ScalarEvent,
    SequenceEndEvent,
    SequenceStartEvent,
    StreamEndEvent,
)
from ruamel.yaml.nodes import ScalarNode, SequenceNode
from ruamel.yaml.reader import ReaderError

from infx.changelog import ENTRY_START
from infx.changelog.model import Entry, Violation, clip, summarized
from infx.changelog.numbers import TEXT_FIELDS, YAML11_FIRST_CHARS, number_problem, yaml11_tag
from infx.changelog.rules import Rule
from infx.changelog.schema_rules import schema_violations
from infx.changelog.text_rules import (
    MAX_CHECKED_BYTES,
    byte_violations,
    ending_violations,
    size_violation,
    too_large,
)
from infx.yamlio import yaml_error_line, yaml_error_text

# An entry nests three levels (list of entries, entry, list of keys); deeper input is never a
# changelog, and bounding it keeps every later step (compose, construct, schema) shallow.
MAX_DEPTH = 8
# Every entry and every value costs microseconds to load and schema-check whatever its size;
# the whole InferenceX history holds 772 entries and 6,365 values. A check reads at most this
# many, which bounds its worst case to a few seconds.
MAX_ENTRIES = 10_000
MAX_VALUES = 100_000

_ENTRY_LINE = re.compile(rb"^- config-keys:$", re.M)


class _Events(Protocol):
    """What the event scan asks of a parser: the next event (ruamel's Event classes)."""

    def get_event(self) -> Any: ...


# ruamel exports only the loaders of its C extension; the bare parser they build on reads
# events without a constructor and resolver per entry (25 times cheaper to start).
_CParser: Callable[[bytes], _Events] = vars(cyaml)["CParser"]


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
        elif line.startswith(ENTRY_START):
            found.append(_crowded_start(line, first_line + index))
        elif line[:1] not in (b"", b" ", b"\t", b"#"):
            found.append(
                Violation(
                    first_line + index,
                    Rule.ENTRY_START,
                    f"top-level line {clip(line)!r} is not an entry start",
                    "every entry starts with a line '- config-keys:'",
                )
            )
        offset += len(line) + 1
    if start is not None:
        chunks.append(Chunk(data[start_offset:], first_line + start))
    return chunks, found


def _crowded_start(line: bytes, number: int) -> Violation:
    """An entry start with more after `- config-keys:` on its line: infx cuts entries at
    lines that hold that text alone, so this line starts no entry."""
    rest = line[len(ENTRY_START) :]
    if not rest.strip(b" \t\r"):
        what, fix = (
            "trailing spaces",
            "remove the spaces after '- config-keys:' (infx changelog fix does it)",
        )
    else:
        what, fix = (
            f"{clip(rest.strip())!r}",
            "end the line after '- config-keys:' and list the keys below it, one "
            "'    - key' per line (no anchor, flow list or comment on that line)",
        )
    return Violation(
        number,
        Rule.ENTRY_START,
        f"'- config-keys:' must stand alone on its line to start an entry; this one is "
        f"followed by {what}",
        fix,
    )


def _refusal(event: Any, depth: int) -> tuple[str, str] | None:
    """Why one parser event has no place in a changelog entry, with the fix; None if it has."""
    kind = type(event)
    if kind is AliasEvent:
        return (
            f"'*{event.anchor}' is a YAML alias; the changelog uses no aliases",
            "quote values that start with '*', e.g. - \"*-mi355x-*\"",
        )
    if getattr(event, "anchor", None):
        return (
            f"anchor '&{event.anchor}' is not allowed",
            "remove it (quote values that start with '&')",
        )
    if getattr(event, "tag", None):
        return f"tag {event.tag!r} is not allowed", "remove it (quote values that start with '!')"
    if kind is ScalarEvent and event.value == "<<" and not event.style:
        return "merge key '<<' is not allowed", "write the keys out in the entry"
    if depth > MAX_DEPTH:
        return (
            f"values nest deeper than {MAX_DEPTH} levels",
            "an entry is a mapping of strings, booleans and lists of strings",
        )
    return None


def _scan(text: bytes, first_line: int, budget: int) -> tuple[Violation | None, int]:
    """The first refused event of `text` and the count of scalar values read, which stops
    growing once it passes `budget`. A syntax error ends the scan quietly: loading
    reports it with its position."""
    depth = values = 0
    parser = _CParser(text)
    try:
        while values <= budget:
            event = parser.get_event()
            kind = type(event)
            if kind is StreamEndEvent:
                break
            if kind is ScalarEvent:
                values += 1
            elif kind is SequenceStartEvent or kind is MappingStartEvent:
                depth += 1
            elif kind is SequenceEndEvent or kind is MappingEndEvent:
                depth -= 1
                continue
            refused = _refusal(event, depth)
            if refused is not None:
                mark = event.start_mark
                return Violation(
                    first_line + mark.line, Rule.YAML, *refused, column=mark.column + 1
                ), values
    except YAMLError:
        pass
    return None, values


def _plain(node: Any) -> Any:
    if isinstance(node, dict):
        return {str(k) if not isinstance(k, str) else k: _plain(v) for k, v in node.items()}
    if isinstance(node, list):
        return [_plain(v) for v in node]
    return node


def _byte_offset(line: bytes, column: int) -> int:
    """Byte offset of a character column in a line."""
    return len(line.decode("utf-8", "replace")[:column].encode("utf-8"))


def _unacceptable(exc: ReaderError, chunk: Chunk) -> Violation | None:
    """A character YAML refuses (a control character), at its own line and column: the
    reader's error has no line, so it would be named at the entry's first line."""
    character = exc.character
    if not isinstance(character, int):
        return None
    text = chunk.text.decode("utf-8", "replace")
    index = text.find(chr(character))
    if index < 0:
        return None
    return Violation(
        chunk.line + text.count("\n", 0, index),
        Rule.YAML,
        f"invalid YAML: unacceptable character U+{character:04X}: {exc.reason}",
        f"remove it (inside a double-quoted string, write it as \\u{character:04x})",
        index - (text.rfind("\n", 0, index) + 1) + 1,
    )


def _yaml_violation(exc: YAMLError, chunk: Chunk) -> Violation:
    if isinstance(exc, ReaderError) and (found := _unacceptable(exc, chunk)) is not None:
        return found
    text = yaml_error_text(exc)
    rel = yaml_error_line(exc)
    column = None
    if isinstance(exc, MarkedYAMLError):
        mark = exc.problem_mark or exc.context_mark
        column = mark.column + 1 if mark is not None else None
    fix = (
        "quote values that start with '*', e.g. - \"*-mi355x-*\""
        if "alias" in text
        else "fix the entry's YAML syntax"
    )
    return Violation(
        chunk.line + rel - 1 if rel else chunk.line, Rule.YAML, f"invalid YAML: {text}", fix, column
    )


def parse_chunk(chunk: Chunk) -> tuple[Entry | None, list[Violation]]:
    """Parse one entry with line positions and validate it against the entry schema."""
    refused, values = _scan(chunk.text, chunk.line, MAX_VALUES)
    if refused is not None:
        return None, [refused]
    if values > MAX_VALUES:
        return None, [_values_violation(chunk.line)]
    return _load_chunk(chunk)


def _values_violation(line: int | None = None) -> Violation:
    return too_large(f"the entries hold more than {MAX_VALUES:,} values", f"{MAX_VALUES:,}", line)


# Every line break of the YAML reader (libyaml reads YAML 1.1: NEL, LS and PS are breaks).
_YAML_BREAK = re.compile(rb"\r\n|\r|\n|\xc2\x85|\xe2\x80[\xa8\xa9]")


def _file_lines(text: bytes) -> list[int]:
    """For each line the YAML reader sees in `text`, the file line it is on (0-based, lines
    ended by LF as git and editors count them): a NEL, LS, PS or lone CR breaks a YAML line
    inside one file line."""
    lines = [0]
    number = 0
    for found in _YAML_BREAK.finditer(text):
        number += found.group().endswith(b"\n")
        lines.append(number)
    return lines


_STR_TAG = "tag:yaml.org,2002:str"
_KINDS = {
    "tag:yaml.org,2002:bool": "boolean",
    "tag:yaml.org,2002:int": "integer",
    "tag:yaml.org,2002:float": "number",
    "tag:yaml.org,2002:null": "null",
    "tag:yaml.org,2002:timestamp": "date",
}


def _scalars(node: Any) -> list[Any]:
    found, stack = [], [node]
    while stack:
        node = stack.pop()
        if isinstance(node, ScalarNode):
            found.append(node)
        else:
            for item in node.value:
                stack.extend(item if isinstance(item, tuple) else (item,))
    return found


def _misread_values(root: Any, first_line: int, data: dict[Any, Any]) -> list[Violation]:
    """Plain values some YAML reader takes for another type than the entry holds: a date or
    timestamp anywhere (no field is one); in a field of text, a value that YAML 1.1
    readers (PyYAML, the InferenceX planner) read as a boolean, number or null (`yes`,
    `off`, `12:30`); in any other field, a number not spelled as a plain decimal (`010`,
    `0o10`, `1_000`: `infx.changelog.numbers`)."""
    found = []
    for (key_node, value_node), read in zip(root.value[0].value, data.values(), strict=True):
        text = isinstance(key_node, ScalarNode) and key_node.value in TEXT_FIELDS
        if not text and isinstance(value_node, ScalarNode) and value_node.style in ("", None):
            problem = number_problem(value_node.value, read)
            if problem is not None:
                mark = value_node.start_mark
                found.append(
                    Violation(first_line + mark.line, Rule.NUMBER, *problem, mark.column + 1)
                )
        for node in _scalars(key_node) + _scalars(value_node):
            if node.style not in ("", None):
                continue
            if node.tag == "tag:yaml.org,2002:timestamp":
                reader, kind = "YAML reads", "date"
            elif text and node.tag == _STR_TAG and node.value[:1] in YAML11_FIRST_CHARS:
                kind = _KINDS.get(yaml11_tag(node.value), "")
                reader = "YAML 1.1 readers (PyYAML, the InferenceX planner) read"
                if not kind:
                    continue
            else:
                continue
            found.append(
                Violation(
                    first_line + node.start_mark.line,
                    Rule.YAML,
                    f"{reader} {node.value!r} as a {kind}",
                    f'quote it: "{node.value}"',
                    node.start_mark.column + 1,
                )
            )
    return sorted(found)


def _load_chunk(chunk: Chunk) -> tuple[Entry | None, list[Violation]]:
    """Compose, construct and schema-check one entry that passed the event scan."""
    loader = CSafeLoader(chunk.text)
    try:
        root = loader.get_single_node()
        with warnings.catch_warnings():
            # Entries are read as strict YAML 1.2, one light loader per entry; ruamel's
            # YAML 1.1 advice about floats such as `1e3` is noise.
            warnings.simplefilter("ignore", MantissaNoDotYAML1_1Warning)
            doc = loader.construct_document(root) if root is not None else None
    except YAMLError as exc:
        return None, [_yaml_violation(exc, chunk)]
    except ValueError:
        # Python converts at most sys.get_int_max_str_digits() decimal digits to an int.
        return None, [
            Violation(
                chunk.line,
                Rule.NUMBER,
                f"a number in this entry has more than {sys.get_int_max_str_digits():,} "
                "digits, more than a YAML reader converts",
                "write a plain decimal of a sensible size",
            )
        ]
    if not isinstance(doc, list) or len(doc) != 1 or not isinstance(doc[0], dict):
        return None, [
            Violation(
                chunk.line,
                Rule.ENTRY_SHAPE,
                "an entry must be one mapping",
                "write the entry as '- config-keys: ...' with its fields below",
            )
        ]
    misread = _misread_values(root, chunk.line, doc[0])
    if any(v.rule == Rule.YAML and "as a date" in v.message for v in misread):
        return None, misread
    # YAML's own line breaks (a lone CR, NEL, LS and PS are too), so marks index the right
    # line; `file_line` turns a mark's line into the file's.
    lines = _YAML_BREAK.split(chunk.text)
    file_of = _file_lines(chunk.text)

    def file_line(yaml_line: int) -> int:
        return chunk.line + file_of[min(yaml_line, len(file_of) - 1)]

    entry = Entry(data=_plain(doc[0]), line=chunk.line, text=chunk.text)
    inline = set()
    for key, (key_node, value_node) in zip(doc[0], root.value[0].value, strict=True):
        name = key if isinstance(key, str) else str(key)
        entry.key_lines[name] = file_line(key_node.start_mark.line)
        v_line = value_node.start_mark.line
        if (
            isinstance(value_node, ScalarNode)
            and value_node.style in ("", None, "'", '"')
            and key_node.start_mark.line == v_line == value_node.end_mark.line
        ):
            inline.add(name)
        entry.value_pos[name] = (
            file_line(v_line),
            _byte_offset(lines[min(v_line, len(lines) - 1)], value_node.start_mark.column),
        )
        if isinstance(value_node, SequenceNode):
            entry.item_lines[name] = [file_line(item.start_mark.line) for item in value_node.value]
    entry.inline = frozenset(inline)
    return entry, misread + schema_violations(entry)


def parse_region(data: bytes, first_line: int = 1) -> tuple[list[Entry], list[Violation]]:
    """Split, parse and schema-check every entry of a region."""
    chunks, found = split_entries(data, first_line)
    if len(chunks) > MAX_ENTRIES:
        return [], [too_large(f"{len(chunks):,} entries to check", f"{MAX_ENTRIES:,} entries")]
    budget = MAX_VALUES
    clean: list[Chunk] = []
    for chunk in chunks:
        refused, values = _scan(chunk.text, chunk.line, budget)
        budget -= values
        if budget < 0:
            return [], [*found, _values_violation()]
        if refused is not None:
            found.append(refused)
        else:
            clean.append(chunk)
    entries: list[Entry] = []
    for chunk in clean:
        entry, problems = _load_chunk(chunk)
        found.extend(problems)
        if entry is not None:
            entries.append(entry)
    return entries, found


def read_document(data: bytes) -> tuple[list[Entry], list[Violation]]:
    """The entries of a whole file and every rule that applies to it on its own (no base)."""
    if len(data) > MAX_CHECKED_BYTES:
        return [], [size_violation(len(data), "the file")]
    found = byte_violations(data) + ending_violations(data)
    if any(v.rule == Rule.ENCODING for v in found):
        return [], sorted(found, key=_order)
    text = data.replace(b"\r\n", b"\n") if b"\r\n" in data else data
    entries, problems = parse_region(text)
    found.extend(problems)
    if text.strip() and not _ENTRY_LINE.search(text):
        found.append(
            Violation(
                1,
                Rule.ROOT,
                "the changelog must be a YAML list of entries",
                "start each entry with '- config-keys:'",
            )
        )
    return entries, summarized(sorted(found, key=_order))


def _order(v: Violation) -> tuple[int, str]:
    return (v.line or 0, v.rule)
