"""The entries a commit range added to the changelog, as the sweep planner needs them.

The gate is strict about layout; the planner must plan what landed even when its
layout broke a gate rule (an entry inserted mid-file, two blank lines before an
entry, a separator of spaces, blank lines at the end). Those come back as
warnings. The planner refuses only what it cannot attribute: a history line
deleted or edited, or an added entry that is not a valid entry.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from infx.changelog.check import check
from infx.changelog.model import Entry, Violation
from infx.changelog.parse import parse_chunk, split_entries
from infx.changelog.rules import Rule
from infx.changelog.text_rules import unresolved_conflicts
from infx.errors import ChangelogError

# Gate rules about layout or links: a landed commit that broke them still plans.
LAYOUT_RULES = frozenset(
    {
        Rule.SEPARATOR,
        Rule.FILE_ENDING,
        Rule.ENTRY_START,
        Rule.ENTRIES,
        Rule.CHARACTERS,
        Rule.PR_LINK,
    }
)


@dataclass
class Landed:
    entries: list[Entry] = field(default_factory=list)
    warnings: list[Violation] = field(default_factory=list)


def _refuse(problems: list[Violation], what: str) -> ChangelogError:
    lines = "\n".join(f"  {v.located()}" for v in problems)
    return ChangelogError(f"{what}:\n{lines}")


def _normalized(text: bytes) -> bytes:
    """An entry's lines without blank lines and top-level comments, which YAML ignores."""
    return b"\n".join(
        line for line in text.split(b"\n") if line.strip(b" \t\r") and line[:1] != b"#"
    )


def _preamble(data: bytes, first_entry_line: int | None) -> bytes:
    if first_entry_line is None:
        return _normalized(data)
    return _normalized(b"\n".join(data.split(b"\n")[: first_entry_line - 1]))


def _continues_history(region: bytes) -> bool:
    """Whether appended text starts with lines that belong to the last existing entry: an
    indented line before the first entry. CRLF is read as YAML reads it (a line break), as
    the gate does; a top-level line there (`---`, or `- config-keys:` with more on its line)
    starts something new, which the gate's own rules name."""
    region = region.replace(b"\r\n", b"\n")
    chunks, _ = split_entries(region)
    preamble = _preamble(region, chunks[0].line if chunks else None)
    return preamble[:1] in (b" ", b"\t")


def _stray_start(region: bytes) -> bool:
    """Whether appended text holds a top-level line that is not an entry start before its
    first entry (or holds no entry at all)."""
    region = region.replace(b"\r\n", b"\n")
    chunks, _ = split_entries(region)
    return bool(_preamble(region, chunks[0].line if chunks else None))


def _inserted(base: bytes, head: bytes, gate: list[Violation]) -> Landed:
    """Entries of `head` that are not in `base`, when base's entries survive in order."""
    base_chunks, _ = split_entries(base)
    head_chunks, _ = split_entries(head)
    same_preamble = _preamble(base, base_chunks[0].line if base_chunks else None) == _preamble(
        head, head_chunks[0].line if head_chunks else None
    )
    kept = [_normalized(c.text) for c in base_chunks]
    position = 0
    added = []
    for chunk in head_chunks:
        if position < len(kept) and _normalized(chunk.text) == kept[position]:
            position += 1
        else:
            added.append((chunk, position < len(kept)))
    if position < len(kept) or not same_preamble:
        raise _refuse(gate, "cannot tell which entries this diff added; history was edited")
    landed = Landed()
    problems = []
    for chunk, mid_file in added:
        entry, found = parse_chunk(chunk)
        problems.extend(found)
        if entry is not None:
            landed.entries.append(entry)
        if mid_file:
            landed.warnings.append(
                Violation(
                    chunk.line,
                    Rule.INSERTED,
                    f"entry inserted at line {chunk.line}, before older entries",
                    "the gate requires new entries at the end of the file",
                )
            )
    if problems:
        raise _refuse(problems, "an added changelog entry is invalid")
    return landed


def added_entries(base: bytes | None, head: bytes | None) -> Landed:
    """The entries added from `base` to `head`; layout problems as warnings."""
    if head is not None and (markers := unresolved_conflicts(head, "the changelog", False)):
        raise _refuse(markers, "the changelog holds committed conflict markers")
    result = check(base, head, None, None)
    kind = result.diff.kind
    if head is None:
        raise _refuse(result.violations, "the changelog cannot be read")
    if kind == "rejected":
        return _inserted(base or b"", head, result.violations)
    if kind == "append" and base and _continues_history(result.diff.appended):
        line = base.count(b"\n") + 1
        raise _refuse(
            [
                Violation(
                    line,
                    Rule.HISTORY,
                    f"line {line} continues the last existing entry",
                    "history is append-only: add a new entry instead of editing an old one",
                )
            ],
            "cannot tell which entries this diff added; history was edited",
        )
    blocking = [v for v in result.violations if v.rule not in LAYOUT_RULES]
    if kind == "append" and _stray_start(result.diff.appended):
        # A top-level line before the first entry it can cut: what follows it would be
        # dropped unplanned, so it is refused in the gate's words.
        line = (base or b"").count(b"\n") + 1
        blocking = (
            blocking
            or [v for v in result.violations if v.rule == Rule.ENTRY_START]
            or [
                Violation(
                    line,
                    Rule.ENTRY_START,
                    "the appended text does not start with an entry",
                    "every entry starts with a line '- config-keys:'",
                )
            ]
        )
    if blocking:
        raise _refuse(blocking, "an added changelog entry is invalid")
    return Landed(result.entries, list(result.violations))
