"""How a head changelog relates to its base: appended entries, pr-link corrections, or neither.

History is immutable. A change either appends whole entries after the base
bytes, or (with nothing appended) rewrites `  pr-link: <link>` lines into other
links. A correction is proven on bytes and then on meaning: the old and new
lines are both exactly `  pr-link: ` + a link, and YAML reads the entries around
them as before except for that link. Anything else is rejected here with the
lines that moved.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Literal

from infx.changelog import ENTRY_START
from infx.changelog.model import Violation, clip
from infx.changelog.parse import Chunk, parse_chunk
from infx.changelog.rules import Rule

PR_LINK_PREFIX = b"  pr-link:"
# The blank lines that precede the first appended entry sit at the very end of the base;
# 4 KiB of it holds any realistic run of them without reading the whole history.
_TAIL = 4096
# A link on a corrected line: URL characters only, none that YAML reads as syntax (no quote,
# '#', '&', '*', '!', space, tab or line break of any kind), never ending in ':'.
_LINK_LINE = re.compile(rb"  pr-link: ([A-Za-z0-9][A-Za-z0-9._~:/%+-]*(?<!:))")
_LINK_START = re.compile(rb"  pr-link: [A-Za-z0-9][A-Za-z0-9._~:/%+-]*")
_LINK = rb"[A-Za-z0-9][A-Za-z0-9._~:/%+-]*(?<!:)"
# Old lines a correction may replace besides the strict form: history holds links with
# trailing spaces, and an empty `pr-link:` whose link sits on the lines below it.
_OLD_LINK_LINE = re.compile(rb"  pr-link:(?: +" + _LINK + rb")? *(?:\n {3,}" + _LINK + rb" *)*")
# A line below a pr-link line that continues its value (indented deeper than any key).
_CONTINUED = re.compile(rb" {3,}\S")


@dataclass(frozen=True)
class Correction:
    """A history `pr-link` line rewritten in place."""

    line: int
    old: str
    new: str


@dataclass
class ChangelogDiff:
    kind: Literal["unchanged", "append", "correction", "rejected"]
    appended: bytes = b""
    base_len: int = 0
    corrections: list[Correction] = field(default_factory=list)
    violations: list[Violation] = field(default_factory=list)


def compare(base: bytes | None, head: bytes) -> ChangelogDiff:
    """Classify the change from `base` (None: file did not exist) to `head`."""
    if not base:
        return ChangelogDiff("append" if head else "unchanged", appended=head)
    if head == base:
        return ChangelogDiff("unchanged", base_len=len(base))
    if head.startswith(base):
        return ChangelogDiff("append", appended=head[len(base) :], base_len=len(base))
    return _non_append(base, head)


BOM = b"\xef\xbb\xbf"


@dataclass(frozen=True)
class EditorSave:
    """What an editor's whole-file save added to a file that is otherwise the base plus
    appended text or corrections: a UTF-8 byte-order mark, CRLF line endings, or both."""

    restored: bytes
    bom: bool
    crlf_lines: int

    def what(self) -> str:
        crlf = f"CRLF line endings ({self.crlf_lines:,} lines)" if self.crlf_lines else ""
        bom = "a byte-order mark" if self.bom else ""
        return " and ".join(part for part in (bom, crlf) if part)


def editor_saved(base: bytes | None, head: bytes) -> EditorSave | None:
    """`head` with what an editor's whole-file save added undone, when the result is the
    base plus appended text or corrections; None when it is not that."""
    if not base:
        return None
    bom = head.startswith(BOM) and not base.startswith(BOM)
    body = head[len(BOM) :] if bom else head
    crlf = body.count(b"\r\n") if b"\r" not in base else 0
    if not bom and not crlf:
        return None
    restored = body.replace(b"\r\n", b"\n") if crlf else body
    if compare(base, restored).kind == "rejected":
        return None
    return EditorSave(restored, bom, crlf)


def separator_violations(base: bytes, appended: bytes) -> list[Violation]:
    """Each appended entry sits after exactly one empty line; lines are region-relative (1 = first
    appended line), so the caller shifts them once it knows the base's line count."""
    found: list[Violation] = []
    if base and not base.endswith(b"\n"):
        return [
            Violation(
                0,
                Rule.SEPARATOR,
                "the appended text continues the last line of history",
                "the base must end with a newline; add entries after it",
            )
        ]
    lines = appended.split(b"\n")
    if appended.endswith(b"\n"):
        lines.pop()
    gap: list[bytes] = [b""] * blank_lines_at_end(base)
    in_entry = False
    stray_reported = False
    for index, line in enumerate(lines):
        if line == ENTRY_START:
            if (base or in_entry) and gap != [b""]:
                found.append(_gap_violation(index + 1, gap))
            in_entry, gap = True, []
        elif not line.strip(b" "):
            gap.append(line)
        else:
            if not in_entry and not stray_reported:
                found.append(
                    Violation(
                        index + 1,
                        Rule.SEPARATOR,
                        "text after history that is not part of an entry",
                        "append whole entries that start with '- config-keys:'",
                    )
                )
                stray_reported = True
            gap = []
    return found


def blank_lines_at_end(base: bytes) -> int:
    """Blank lines (empty or spaces only) that end the base."""
    count = 0
    for line in reversed(base[-_TAIL:].split(b"\n")[:-1] if base else []):
        if line.strip(b" "):
            break
        count += 1
    return count


def _gap_violation(line: int, gap: list[bytes]) -> Violation:
    if any(gap):
        message = "the line before this entry holds spaces; entries are separated by an empty line"
    elif not gap:
        message = "no empty line before this entry"
    else:
        message = f"{len(gap)} empty lines before this entry"
    return Violation(line, Rule.SEPARATOR, message, "separate entries with exactly one empty line")


def _rejected(
    line: int,
    message: str,
    fix: str = "history is append-only: restore the base lines and add entries at the end",
) -> ChangelogDiff:
    return ChangelogDiff("rejected", violations=[Violation(line, Rule.HISTORY, message, fix)])


def _common_prefix(a: list[bytes], b: list[bytes]) -> int:
    n = min(len(a), len(b))
    i = 0
    while i < n and a[i] == b[i]:
        i += 1
    return i


def _insertion(base_lines: list[bytes], head_lines: list[bytes]) -> ChangelogDiff | None:
    """A rejection naming the inserted entry when head is base with lines inserted inside it."""
    extra = len(head_lines) - len(base_lines)
    start = _common_prefix(base_lines, head_lines)
    if head_lines[start + extra :] != base_lines[start:]:
        return None
    while start > 0 and head_lines[start - 1] == head_lines[start + extra - 1]:
        start -= 1
    return _inserted(head_lines[start : start + extra], start)


def _inserted(block: list[bytes], at: int) -> ChangelogDiff:
    """The rejection of `block` inserted into history at index `at`: the entry it starts,
    else its lines."""
    if ENTRY_START in block:
        line = at + block.index(ENTRY_START) + 1
        return _rejected(
            line,
            f"entry inserted at line {line}; move it to the end of the file",
            "history is append-only: new entries go after the last entry",
        )
    return _rejected(
        at + 1,
        f"{len(block)} line(s) inserted into history at line {at + 1}",
        "history is append-only: put the change in a new entry at the end of the file",
    )


# How many lines an edit of history that shifts the rest may insert or remove and still be
# named as that (each candidate compares the rest of history once).
_MAX_SHIFT = 64


def _shift(base_lines: list[bytes], head_lines: list[bytes], at: int) -> ChangelogDiff | None:
    """A rejection naming lines inserted into or removed from history at index `at`, when the
    rest of history (some of it: not a changed tail) follows them unchanged, whatever is
    appended after it; None otherwise. Without it, one inserted or removed line reads as
    every later line changed."""
    rest = base_lines[at:]
    if rest and rest[-1] == b"":
        rest = rest[:-1]  # the file's final newline: appended text may follow it
    for k in range(1, _MAX_SHIFT + 1):
        if head_lines[at + k : at + k + len(rest)] == rest:
            return _inserted(head_lines[at : at + k], at)
        kept = base_lines[at + k :]
        if kept and kept[-1] == b"":
            kept = kept[:-1]
        if (
            kept
            and head_lines[at : at + len(kept)] == kept
            and not _holds(head_lines[at + len(kept) :], base_lines[at : at + k])
        ):
            return _rejected(
                at + 1,
                f"{k} line(s) of history were removed at line {at + 1}, the first "
                f"{clip(base_lines[at])!r}",
            )
    return None


def _holds(lines: list[bytes], block: list[bytes]) -> bool:
    """Whether `block` occurs in `lines` as consecutive lines (lines moved, not removed)."""
    first = block[0]
    return any(lines[i : i + len(block)] == block for i, line in enumerate(lines) if line == first)


def _chunk_around(lines: list[bytes], index: int) -> Chunk:
    start = index
    while start > 0 and lines[start] != ENTRY_START:
        start -= 1
    end = index + 1
    while end < len(lines) and lines[end] != ENTRY_START:
        end += 1
    return Chunk(b"\n".join(lines[start:end]) + b"\n", start + 1)


def _correction(
    base_lines: list[bytes], head_lines: list[bytes], index: int, line: int
) -> Correction | str:
    """The correction at item `index` (head file line `line`), or why it is not one. An item
    is one line, or a historic pr-link line joined with the lines that continue it."""
    old, new = base_lines[index], head_lines[index]
    new_link = _LINK_LINE.fullmatch(new)
    if _OLD_LINK_LINE.fullmatch(old) is None:
        return f"line {line} is not a plain '  pr-link: <link>' line in history"
    if new_link is None:
        start = _LINK_START.match(new)
        rest = new[start.end() :] if start else b""
        found = f"{clip(rest)!r} after the link" if rest else repr(clip(new))
        return f"line {line} must stay '  pr-link: <link>' with nothing else, found {found}"
    link = new_link.group(1).decode()
    before, _ = parse_chunk(_chunk_around(base_lines, index))
    after, _ = parse_chunk(_chunk_around(head_lines, index))
    if (
        before is None
        or after is None
        or after.pr_link != link
        or after.line_of("pr-link") != index + 1
        or before.content() != after.content()
    ):
        return f"the entry around line {line} reads differently, not just its pr-link"
    return Correction(line, str(before.pr_link), link)


def _joined(lines: list[bytes]) -> tuple[list[bytes], list[int]]:
    """Each pr-link line joined with the lines that continue its value, and the 0-based file
    line each item starts at."""
    items: list[bytes] = []
    starts: list[int] = []
    for number, line in enumerate(lines):
        if items and items[-1].startswith(PR_LINK_PREFIX) and _CONTINUED.match(line):
            items[-1] += b"\n" + line
            continue
        items.append(line)
        starts.append(number)
    return items, starts


def _non_append(base: bytes, head: bytes) -> ChangelogDiff:
    base_lines = base.split(b"\n")
    head_lines = head.split(b"\n")
    found = _line_changes(base_lines, head_lines, list(range(len(head_lines))))
    if found.kind == "rejected" and len(head_lines) < len(base_lines):
        # A correction that puts a historic link written below its `pr-link:` line back on
        # that line: compare pr-link values with the lines that continue them.
        base_items, _ = _joined(base_lines)
        head_items, starts = _joined(head_lines)
        if len(base_items) == len(head_items):
            joined = _line_changes(base_items, head_items, starts)
            if joined.kind == "correction":
                return joined
    return found


def _line_changes(
    base_lines: list[bytes], head_lines: list[bytes], starts: list[int]
) -> ChangelogDiff:
    """Classify a change line by line; `starts[i]` is the 0-based head file line of item i."""
    if len(head_lines) > len(base_lines):
        inserted = _insertion(base_lines, head_lines)
        if inserted is not None:
            return inserted
    same_len = min(len(base_lines), len(head_lines))
    changed = [i for i in range(same_len) if base_lines[i] != head_lines[i]]
    link_lines = [
        i
        for i in changed
        if base_lines[i].startswith(PR_LINK_PREFIX) and head_lines[i].startswith(PR_LINK_PREFIX)
    ]
    is_link = set(link_lines)
    moved = [i for i in changed if i not in is_link]
    if len(head_lines) < len(base_lines):
        first = moved[0] + 1 if moved else same_len
        removed = len(base_lines) - len(head_lines)
        return _rejected(
            first, f"{removed} line(s) of history were removed (first difference at line {first})"
        )
    if moved:
        first = moved[0] + 1
        shifted = _shift(base_lines, head_lines, moved[0]) if len(moved) > 1 else None
        if shifted is not None:
            return shifted
        more = f" ({len(moved)} lines differ)" if len(moved) > 1 else ""
        old, new = clip(base_lines[moved[0]]), clip(head_lines[moved[0]])
        return _rejected(first, f"history changed at line {first}: {old!r} became {new!r}{more}")
    if len(head_lines) > len(base_lines):
        return _rejected(
            link_lines[0] + 1,
            "this diff both corrects pr-link lines and appends entries",
            "split it: one change that appends entries, another that corrects pr-links",
        )
    corrections = []
    for i in link_lines:
        found = _correction(base_lines, head_lines, i, starts[i] + 1)
        if isinstance(found, str):
            return _rejected(
                starts[i] + 1,
                found,
                "a correction changes only the link on a '  pr-link: <link>' line",
            )
        corrections.append(found)
    return ChangelogDiff("correction", corrections=corrections)
