"""Rules on the bytes of a changelog region, before any YAML is read: encoding, control
characters, conflict markers, the file ending, and the size limit of one check.

Each scan is a C-level count or search, so these rules cost little on large input; a
repeated mistake is shown a few times with line and column, and the rest are counted.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from itertools import islice

from infx.changelog.model import Violation, more, summarized
from infx.changelog.rules import Rule

# The most bytes one check parses: ten times the whole InferenceX history after two years, read
# in one to three seconds; anything larger is refused at once instead of parsed for minutes.
MAX_CHECKED_BYTES = 4 * 2**20
# Five occurrences of one bad byte show where and what; the rest are counted in one line.
_MAX_SAME = 5

_CONFLICT = re.compile(rb"^(<<<<<<<|=======|>>>>>>>|\|\|\|\|\|\|\|)(?: |$)", re.M)
_LONE_CR = re.compile(rb"\r(?!\n)")
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
        Rule.SIZE,
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
    rule: Rule = Rule.CHARACTERS,
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


def _not_allowed(name: str, fix: str) -> Callable[[int], tuple[str, str]]:
    return lambda _: (f"{name} is not allowed", fix)


def byte_violations(data: bytes, first_line: int = 1) -> list[Violation]:
    """Encoding, control characters and conflict markers; C-level scans and counts."""
    found: list[Violation] = []
    try:
        data.decode("utf-8")
    except UnicodeDecodeError as exc:
        found.append(
            Violation(
                _line_at(data, exc.start, first_line),
                Rule.ENCODING,
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
                Rule.CHARACTERS,
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
                _not_allowed(name, fix),
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
            rule=Rule.CONFLICT_MARKER,
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
                Rule.FILE_ENDING,
                "the file does not end with a newline",
                "add one newline at the end",
            )
        ]
    last_start = head.rfind(b"\n", 0, len(head) - 1) + 1
    if not head[last_start:-1].strip(b" "):
        return [
            Violation(
                head.count(b"\n"),
                Rule.FILE_ENDING,
                "the file ends with blank lines",
                "end the file with exactly one newline after the last entry",
            )
        ]
    return []


def unresolved_conflicts(data: bytes, path: str, merging: bool) -> list[Violation]:
    """One problem per conflict git left in the file, naming the line of each of its markers;
    none when the file holds no start or end marker (a lone `=======` is left to the byte
    rules). Which side holds what is not judged: both are still in the file."""
    if b"<<<<<<<" not in data and b">>>>>>>" not in data:
        return []
    groups: list[list[tuple[int, str]]] = []
    line, offset, open_group = 1, 0, False
    for found in _CONFLICT.finditer(data):
        line += data.count(b"\n", offset, found.start())
        offset = found.start()
        marker = found.group(1).decode()
        if marker == "<<<<<<<" or not open_group:
            groups.append([])
        groups[-1].append((line, marker))
        open_group = marker != ">>>>>>>"
    if not any(marker in ("<<<<<<<", ">>>>>>>") for group in groups for _, marker in group):
        return []
    fix = (
        "run `infx changelog resolve-conflict`: main's entries, then the branch's"
        if merging
        else f"keep both sides' entries, main's first, and delete the marker lines of {path}"
    )
    return summarized(
        [
            Violation(
                group[0][0],
                Rule.CONFLICT_MARKER,
                "unresolved merge conflict: merge-conflict marker "
                + ", ".join(f"{marker} at line {at}" for at, marker in group),
                fix,
            )
            for group in groups
        ]
    )
