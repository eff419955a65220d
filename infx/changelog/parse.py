"""Byte-level rules and entry parsing for a region of perf-changelog.yaml.

Everything here works on bytes plus the 1-based line number at which the
region starts, so a check can look at appended bytes alone and still report
head-file line numbers.

Hostile input is refused before anything is built: the parser's events are
scanned first (flat, in C), and an entry holding an alias, an anchor, a tag,
a merge key or deep nesting is never composed, constructed or validated.
"""

from __future__ import annotations

import difflib
import re
import warnings
from collections.abc import Callable
from dataclasses import dataclass
from itertools import islice
from typing import TYPE_CHECKING, Any

from ruamel.yaml.cyaml import CParser, CSafeLoader
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

from infx import schemas
from infx.changelog import ENTRY_START
from infx.changelog.model import MAX_PER_RULE, Entry, Violation, clip, more, summarized
from infx.yamlio import yaml_error_line, yaml_error_text

if TYPE_CHECKING:
    from jsonschema.exceptions import ValidationError

# The most bytes one check parses: ten times the whole InferenceX history after two years, read
# in one to three seconds; anything larger is refused at once instead of parsed for minutes.
MAX_CHECKED_BYTES = 4 * 2**20
# An entry nests three levels (list of entries, entry, list of keys); deeper input is never a
# changelog, and bounding it keeps every later step (compose, construct, schema) shallow.
MAX_DEPTH = 8
# Every entry and every value costs microseconds to load and schema-check whatever its size;
# the whole InferenceX history holds 772 entries and 6,365 values. A check reads at most this
# many, which bounds its worst case to a few seconds.
MAX_ENTRIES = 10_000
MAX_VALUES = 100_000
# Five occurrences of one bad byte show where and what; the rest are counted in one line.
_MAX_SAME = 5

_CONFLICT = re.compile(rb"^(<<<<<<<|=======|>>>>>>>|\|\|\|\|\|\|\|)(?: |$)", re.M)
_LONE_CR = re.compile(rb"\r(?!\n)")
_ENTRY_LINE = re.compile(rb"^- config-keys:$", re.M)
# Characters the gate refuses: each with a name, and the fix for where it appears.
_YAML11_BREAK = "YAML 1.1 readers (PyYAML, the InferenceX planner) read it as a line break"
_BAD_CHARACTERS: tuple[tuple[bytes, str, str], ...] = (
    (b"\0", "NUL byte", "remove the NUL byte"),
    (b"\xc2\x85", f"next-line character U+0085 ({_YAML11_BREAK})", "use a space or a newline"),
    (b"\xe2\x80\xa8", f"line separator U+2028 ({_YAML11_BREAK})", "use a space or a newline"),
    (b"\xe2\x80\xa9", f"paragraph separator U+2029 ({_YAML11_BREAK})", "use a space or a newline"),
)


def too_large(what: str, limit: str, line: int | None = None) -> Violation:
    return Violation(
        line,
        "size",
        f"{what}; infx checks at most {limit} at once",
        "split the change into smaller ones",
    )


def size_violation(size: int, what: str) -> Violation:
    return too_large(f"{what} is {size / 2**20:.1f} MiB", f"{MAX_CHECKED_BYTES // 2**20} MiB")


def _line_at(data: bytes, offset: int, first_line: int) -> int:
    return first_line + data.count(b"\n", 0, offset)


def _column_at(data: bytes, offset: int) -> int:
    """1-based character column of a byte offset."""
    start = data.rfind(b"\n", 0, offset) + 1
    return len(data[start:offset].decode("utf-8", "replace")) + 1


def _located(
    data: bytes,
    pattern: re.Pattern[bytes],
    total: int,
    first_line: int,
    describe: Callable[[int], tuple[str, str]],
    what: str,
    rule: str = "characters",
) -> list[Violation]:
    """The first few matches, each with line, column and fix, then the count of the rest."""
    found: list[Violation] = []
    rest_line: int | None = None
    for index, match in enumerate(islice(pattern.finditer(data), _MAX_SAME + 1)):
        line = _line_at(data, match.start(), first_line)
        if index == _MAX_SAME:
            rest_line = line
            break
        message, fix = describe(match.start())
        found.append(Violation(line, rule, message, fix, _column_at(data, match.start())))
    if total > _MAX_SAME:
        found.append(more(rule, total - _MAX_SAME, what, rest_line))
    return found


def _tab(data: bytes, offset: int) -> tuple[str, str]:
    start = data.rfind(b"\n", 0, offset) + 1
    if not data[start:offset].strip(b" \t"):
        return "tab in the indentation", "indent with spaces"
    return "tab is not allowed", 'use a space (inside a double-quoted string, write "\\t")'


def byte_violations(data: bytes, first_line: int = 1) -> list[Violation]:
    """Encoding, control characters and conflict markers; C-level scans and counts."""
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
    crlf = data.count(b"\r\n")
    if crlf:
        first = data.find(b"\r\n")
        found.append(
            Violation(
                _line_at(data, first, first_line),
                "characters",
                f"{crlf:,} line(s) end with CRLF (Windows line endings), the first here",
                "save the file with LF line endings (infx changelog fix does it)",
            )
        )
    lone_cr = data.count(b"\r") - crlf
    if lone_cr:
        found += _located(
            data,
            _LONE_CR,
            lone_cr,
            first_line,
            lambda _: ("carriage return (CR) is not allowed", "use a newline (LF)"),
            "carriage returns",
        )
    tabs = data.count(b"\t")
    if tabs:
        found += _located(
            data, re.compile(rb"\t"), tabs, first_line, lambda at: _tab(data, at), "tabs"
        )
    for needle, name, fix in _BAD_CHARACTERS:
        total = data.count(needle)
        if total:
            found += _located(
                data,
                re.compile(re.escape(needle)),
                total,
                first_line,
                lambda _, name=name, fix=fix: (f"{name} is not allowed", fix),
                "of the same character",
            )
    if b"<<<<<<<" in data or b"=======" in data or b">>>>>>>" in data or b"|||||||" in data:
        found += _located(
            data,
            _CONFLICT,
            _CONFLICT.subn(b"", data)[1],
            first_line,
            lambda _: (
                "merge-conflict marker left in the file",
                "resolve the conflict (infx changelog resolve-conflict)",
            ),
            "conflict markers",
            rule="conflict-marker",
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
    parser = CParser(text)
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
                    first_line + mark.line, "yaml", *refused, column=mark.column + 1
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


def _yaml_violation(exc: YAMLError, chunk: Chunk) -> Violation:
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
        chunk.line + rel - 1 if rel else chunk.line, "yaml", f"invalid YAML: {text}", fix, column
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


_YAML_BREAK = re.compile(rb"\r\n|\r|\n")
_STR_TAG = "tag:yaml.org,2002:str"
_KINDS = {
    "tag:yaml.org,2002:bool": "boolean",
    "tag:yaml.org,2002:int": "integer",
    "tag:yaml.org,2002:float": "number",
    "tag:yaml.org,2002:null": "null",
    "tag:yaml.org,2002:timestamp": "date",
}


# The fields that hold text: a value YAML 1.1 reads as another type is misread there.
_TEXT_FIELDS = frozenset({"config-keys", "description", "pr-link"})


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


def _misread_values(root: Any, first_line: int) -> list[Violation]:
    """Plain values some YAML reader takes for another type than the entry holds: a date or
    timestamp anywhere (no field is one), and, in a field of text, a value that YAML 1.1
    readers (PyYAML, the InferenceX planner) read as a boolean, number or null (`yes`,
    `off`, `12:30`)."""
    from yaml.nodes import ScalarNode as Yaml11Scalar
    from yaml.resolver import Resolver

    resolver = Resolver()
    first_chars = Resolver.yaml_implicit_resolvers
    found = []
    for key_node, value_node in root.value[0].value:
        text = isinstance(key_node, ScalarNode) and key_node.value in _TEXT_FIELDS
        for node in _scalars(key_node) + _scalars(value_node):
            if node.style not in ("", None):
                continue
            if node.tag == "tag:yaml.org,2002:timestamp":
                reader, kind = "YAML reads", "date"
            elif text and node.tag == _STR_TAG and node.value[:1] in first_chars:
                kind = _KINDS.get(resolver.resolve(Yaml11Scalar, node.value, (True, False)), "")
                reader = "YAML 1.1 readers (PyYAML, the InferenceX planner) read"
                if not kind:
                    continue
            else:
                continue
            found.append(
                Violation(
                    first_line + node.start_mark.line,
                    "yaml",
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
    if not isinstance(doc, list) or len(doc) != 1 or not isinstance(doc[0], dict):
        return None, [
            Violation(
                chunk.line,
                "entry-shape",
                "an entry must be one mapping",
                "write the entry as '- config-keys: ...' with its fields below",
            )
        ]
    misread = _misread_values(root, chunk.line)
    if any(v.rule == "yaml" and "as a date" in v.message for v in misread):
        return None, misread
    # YAML's own line breaks (a lone CR is one too), so marks index the right line.
    lines = _YAML_BREAK.split(chunk.text)
    entry = Entry(data=_plain(doc[0]), line=chunk.line, text=chunk.text)
    inline = set()
    for key, (key_node, value_node) in zip(doc[0], root.value[0].value, strict=True):
        name = key if isinstance(key, str) else str(key)
        entry.key_lines[name] = chunk.line + key_node.start_mark.line
        v_line = value_node.start_mark.line
        if (
            isinstance(value_node, ScalarNode)
            and value_node.style in ("", None, "'", '"')
            and key_node.start_mark.line == v_line == value_node.end_mark.line
        ):
            inline.add(name)
        entry.value_pos[name] = (
            chunk.line + v_line,
            _byte_offset(lines[v_line], value_node.start_mark.column),
        )
        if isinstance(value_node, SequenceNode):
            entry.item_lines[name] = [
                chunk.line + item.start_mark.line for item in value_node.value
            ]
    entry.inline = frozenset(inline)
    return entry, misread + schema_violations(entry)


_TYPE_FIX = {
    "boolean": "use true or false",
    "integer": "use a whole number",
    "string": "write text (quote it if YAML reads it as a number or boolean)",
    "array": "write a list, one '- item' per line",
}


def _schema_fix(error: ValidationError) -> str:
    kind = error.validator
    if kind == "type":
        return _TYPE_FIX.get(str(error.validator_value), "see schemas/perf-changelog.schema.json")
    if kind == "additionalProperties":
        known = list(error.schema.get("properties", {}))
        instance = error.instance if isinstance(error.instance, dict) else {}
        extra = [str(k) for k in instance if k not in known]
        close = difflib.get_close_matches(extra[0], known, n=1, cutoff=0.6) if extra else []
        if close:
            return f"did you mean {close[0]!r}?"
        return f"remove it; the keys of an entry are {', '.join(known)}"
    if kind == "required":
        return "add the missing key"
    if kind == "enum":
        return "use one of " + ", ".join(map(str, error.validator_value))
    if kind in ("minItems", "minLength"):
        return "give at least one non-empty value"
    if kind == "minimum":
        return f"use a number of at least {error.validator_value}"
    if kind == "not":
        return "remove append-only, or remove the eval fields"
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
            extra = [k for k in error.instance if k not in error.schema.get("properties", {})]
            line = entry.line_of(str(extra[0])) if extra else line
        message = schemas.describe(error)
        if message is not None:
            found.append(Violation(line, "schema", message, _schema_fix(error)))
    return found


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
    if any(v.rule == "encoding" for v in found):
        return [], sorted(found, key=_order)
    text = data.replace(b"\r\n", b"\n") if b"\r\n" in data else data
    entries, problems = parse_region(text)
    found.extend(problems)
    if text.strip() and not _ENTRY_LINE.search(text):
        found.append(
            Violation(
                1,
                "root",
                "the changelog must be a YAML list of entries",
                "start each entry with '- config-keys:'",
            )
        )
    return entries, summarized(sorted(found, key=_order))


def validate_document(data: bytes) -> list[Violation]:
    """Every rule that applies to a whole file on its own (no base to compare against)."""
    return read_document(data)[1]


def _order(v: Violation) -> tuple[int, str]:
    return (v.line or 0, v.rule)
