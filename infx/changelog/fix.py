"""Mechanical repairs of appended changelog text, never touching a byte of history.

Each repair is one the gate names and one with a single right answer: line
endings, trailing spaces, the empty line between entries, the file ending,
placeholder spellings of a pr-link, and a number not spelled as a plain decimal
where every YAML reader reads the same number (`0x10`, `1_000`, `+5`). Everything
else is left for a person (`010`, read 8 or 10, among it).
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from infx.changelog import ENTRY_START
from infx.changelog.canonicalize import rewrite_links, same_entries
from infx.changelog.diff import blank_lines_at_end, compare, editor_saved
from infx.changelog.links import PLACEHOLDER
from infx.changelog.model import Entry
from infx.changelog.numbers import rewrite_numbers
from infx.changelog.parse import parse_region
from infx.changelog.text_rules import MAX_CHECKED_BYTES, size_violation
from infx.errors import ChangelogError

_WORDS = "xxx|tbd|tba|todo|pending"
_PLACEHOLDER_LIKE = re.compile(
    rf"(?i:{_WORDS})|(?:https?://[^/\s]+/[^/\s]+/[^/\s]+/)?pull/?(?i:{_WORDS})?/?", re.ASCII
)


_SPACED_START = re.compile(rb"^" + re.escape(ENTRY_START) + rb"[ \t]+$", re.M)


@dataclass(frozen=True)
class Fix:
    """One repair; `line` is a line of the fixed file, None for the whole file."""

    line: int | None
    what: str


def placeholder_spelling(value: object) -> bool:
    """A pr-link that means "no PR number yet" but is not spelled XXX or `.../pull/XXX`."""
    if not isinstance(value, str) or not _PLACEHOLDER_LIKE.fullmatch(value):
        return False
    return value != PLACEHOLDER and not value.endswith(f"/pull/{PLACEHOLDER}")


def _separators(region: bytes, blanks_before: int, first_line: int) -> tuple[bytes, list[Fix]]:
    """Exactly one empty line before each entry (counting the blank lines history ends with,
    which stay), no blank line at the end, and a final newline. Mirrors the gate's rule."""
    has_base = first_line > 1
    lines = region.split(b"\n")
    if lines[-1] == b"":
        lines.pop()
    out: list[bytes] = []
    fixes: list[Fix] = []
    gap: list[bytes] = []
    seen_text = seen_entry = False
    for line in lines:
        if not line.strip(b" "):
            gap.append(line)
            continue
        history = 0 if seen_text else blanks_before
        have = [b""] * history + gap
        if line == ENTRY_START and (has_base or seen_entry) and have != [b""] and history < 2:
            out += [b""] if history == 0 else []
            fixes.append(
                Fix(first_line + len(out), f"one empty line before this entry (was {_gap(have)})")
            )
        else:
            out += gap
        seen_text = True
        seen_entry = seen_entry or line == ENTRY_START
        gap = []
        out.append(line)
    if gap:
        fixes.append(Fix(None, f"removed {len(gap)} blank line(s) at the end of the file"))
    if out and not region.endswith(b"\n"):
        fixes.append(Fix(None, "added the newline that ends the file"))
    return (b"\n".join(out) + b"\n" if out else b""), fixes


def _gap(lines: list[bytes]) -> str:
    if not lines:
        return "none"
    if any(lines):
        return "a line of spaces" if len(lines) == 1 else f"{len(lines)} blank lines with spaces"
    return f"{len(lines)} empty lines"


def fix_appended(base: bytes | None, head: bytes) -> tuple[bytes, list[Fix]]:
    """`head` with the mechanical fixes applied to the text appended after `base`."""
    diff = compare(base, head)
    fixes: list[Fix] = []
    saved = editor_saved(base, head) if diff.kind == "rejected" else None
    if saved is not None:
        if saved.bom:
            fixes.append(Fix(None, "removed the byte-order mark at the start of the file"))
        if saved.crlf_lines:
            fixes.append(
                Fix(
                    None,
                    "the whole file had been saved with CRLF line endings: restored LF on "
                    f"{saved.crlf_lines:,} line(s)",
                )
            )
        head, diff = saved.restored, compare(base, saved.restored)
    if diff.kind == "unchanged":
        return head, fixes
    if diff.kind != "append":
        why = diff.violations[0].text() if diff.violations else "it corrects pr-links"
        raise ChangelogError(f"nothing was fixed: the file does more than append ({why})")
    if base and not base.endswith(b"\n"):
        raise ChangelogError("nothing was fixed: the last line of history has no newline")
    region = diff.appended
    if len(region) > MAX_CHECKED_BYTES:
        raise ChangelogError(size_violation(len(region), "the appended text").text())
    offset = base.count(b"\n") if base else 0
    crlf = region.count(b"\r\n")
    if crlf:
        region = region.replace(b"\r\n", b"\n")
        fixes.append(Fix(None, f"converted {crlf:,} CRLF line ending(s) to LF"))
    # What the appended text says before any repair (YAML reads CRLF as a line break, and
    # an entry start followed by spaces as the entry start it is once they are removed).
    said, _ = parse_region(_SPACED_START.sub(ENTRY_START, region))
    lines = region.split(b"\n")
    stripped = [line.rstrip(b" \t") if line.strip(b" \t") else line for line in lines]
    trailing = sum(a != b for a, b in zip(lines, stripped, strict=True))
    if trailing:
        region = b"\n".join(stripped)
        fixes.append(Fix(None, f"removed trailing spaces from {trailing:,} line(s)"))
    region, layout = _separators(region, blank_lines_at_end(base or b""), offset + 1)
    fixes += layout
    entries, _ = parse_region(region)
    region, rewrites = rewrite_links(
        region, entries, lambda v: PLACEHOLDER if placeholder_spelling(v) else None
    )
    fixes += [Fix(offset + r.line, f"pr-link {r.old!r} -> {r.new}") for r in rewrites]
    region, numbers = rewrite_numbers(region, parse_region(region)[0] if rewrites else entries)
    fixes += [
        Fix(offset + line, f"{old} -> {new}, the plain decimal every YAML reader reads alike")
        for line, old, new in numbers
    ]
    if fixes:
        same_entries(said, region, [_fixed_link(e) for e in said])
    return (base or b"") + region, fixes


def _fixed_link(entry: Entry) -> object:
    """What an entry's pr-link reads once fixed: XXX for a placeholder spelling written on
    the pr-link line, else what it read."""
    spliced = "pr-link" in entry.inline and placeholder_spelling(entry.pr_link)
    return PLACEHOLDER if spliced else entry.pr_link
