"""How a head changelog relates to its base: appended entries, pr-link corrections, or neither.

History is immutable. A change either appends whole entries after the base
bytes, or (with nothing appended) rewrites `  pr-link:` lines into canonical
links. Anything else is rejected here with the lines that moved.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Literal

from ruamel.yaml.error import YAMLError

from infx.changelog import ENTRY_START
from infx.changelog.model import Violation, clip
from infx.yamlio import strict_loader

PR_LINK_PREFIX = b"  pr-link:"
_TAIL = 4096


@dataclass(frozen=True)
class Correction:
    """A history `pr-link` line rewritten in place."""

    line: int
    old: str
    new: object


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


def separator_violations(base: bytes, appended: bytes) -> list[Violation]:
    """Each appended entry sits after exactly one empty line; lines are region-relative (1 = first
    appended line), so the caller shifts them once it knows the base's line count."""
    found: list[Violation] = []
    if base and not base.endswith(b"\n"):
        return [
            Violation(
                0,
                "separator",
                "the appended text continues the last line of history",
                "the base must end with a newline; add entries after it",
            )
        ]
    tail = base[-_TAIL:].split(b"\n")[:-1] if base else []
    blanks_before = 0
    for line in reversed(tail):
        if line.strip(b" "):
            break
        blanks_before += 1
    lines = appended.split(b"\n")
    if appended.endswith(b"\n"):
        lines.pop()
    gap: list[bytes] = [b""] * blanks_before
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
                        "separator",
                        "text after history that is not part of an entry",
                        "append whole entries that start with '- config-keys:'",
                    )
                )
                stray_reported = True
            gap = []
    return found


def _gap_violation(line: int, gap: list[bytes]) -> Violation:
    if any(gap):
        message = "the line before this entry holds spaces; entries are separated by an empty line"
    elif not gap:
        message = "no empty line before this entry"
    else:
        message = f"{len(gap)} empty lines before this entry"
    return Violation(line, "separator", message, "separate entries with exactly one empty line")


def _pr_link_value(line: bytes) -> object:
    try:
        doc = strict_loader().load(line)
    except YAMLError:
        return None
    return doc.get("pr-link") if isinstance(doc, dict) else None


def _rejected(
    line: int,
    message: str,
    fix: str = "history is append-only: restore the base lines and add entries at the end",
) -> ChangelogDiff:
    return ChangelogDiff("rejected", violations=[Violation(line, "history", message, fix)])


def _non_append(base: bytes, head: bytes) -> ChangelogDiff:
    base_lines = base.split(b"\n")
    head_lines = head.split(b"\n")
    same_len = min(len(base_lines), len(head_lines))
    changed = [i for i in range(same_len) if base_lines[i] != head_lines[i]]
    corrections, moved = [], []
    for i in changed:
        old, new = base_lines[i], head_lines[i]
        if old.startswith(PR_LINK_PREFIX) and new.startswith(PR_LINK_PREFIX):
            corrections.append(
                Correction(i + 1, old.decode("utf-8", "replace"), _pr_link_value(new))
            )
        else:
            moved.append(i)
    if len(head_lines) < len(base_lines):
        first = moved[0] + 1 if moved else same_len
        removed = len(base_lines) - len(head_lines)
        return _rejected(
            first, f"{removed} line(s) of history were removed (first difference at line {first})"
        )
    if moved:
        first = moved[0] + 1
        more = f" ({len(moved)} lines differ)" if len(moved) > 1 else ""
        old, new = clip(base_lines[moved[0]]), clip(head_lines[moved[0]])
        return _rejected(first, f"history changed at line {first}: {old!r} became {new!r}{more}")
    if len(head_lines) > len(base_lines):
        return _rejected(
            corrections[0].line,
            "this diff both corrects pr-link lines and appends entries",
            "split it: one change that appends entries, another that corrects pr-links",
        )
    return ChangelogDiff("correction", corrections=corrections)
