"""`infx changelog check` as a function of what was read: the verdict on one changelog edit.

Besides the rules of `check`, the gate knows where the edit happens: a file still holding a
merge's conflict markers is named as such and nothing else; during a merge, every entry the
result drops from either side is named.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Collection
from dataclasses import dataclass

from infx.changelog.check import DEFAULT_KEYS_SOURCE, CheckResult, check
from infx.changelog.diff import ChangelogDiff
from infx.changelog.links import LinkPolicy
from infx.changelog.merge import dropped_entries
from infx.changelog.model import Entry, Violation, summarized


@dataclass(frozen=True)
class ConfigRules:
    """What the master configs tell the gate: the keys they define (read from `source`, the
    glob in force) and, for an entry, why it selects no benchmark job (None: it selects some)."""

    keys: Collection[str]
    source: str = DEFAULT_KEYS_SOURCE
    selects: Callable[[Entry], str | None] | None = None


@dataclass(frozen=True)
class MergeFiles:
    """The changelog at the common ancestor of a merge in progress and on each side, named."""

    ancestor: bytes
    sides: list[tuple[bytes, str]]


@dataclass(frozen=True)
class GateFacts:
    """One gate run's inputs; `merge` is set while a merge is in progress."""

    path: str
    base: bytes | None
    head: bytes | None
    policy: LinkPolicy | None
    merge: MergeFiles | None = None


def gate(facts: GateFacts, rules: ConfigRules | None) -> CheckResult:
    """The verdict: unresolved conflict markers alone when there are any, else every rule,
    with the entries a merge in progress drops."""
    conflicts = unresolved_conflicts(facts.head or b"", facts.path, facts.merge is not None)
    if conflicts:
        return CheckResult(ChangelogDiff("rejected"), facts.base, conflicts)
    result = check(
        facts.base,
        facts.head,
        facts.policy,
        rules.keys if rules is not None else None,
        keys_source=rules.source if rules is not None else DEFAULT_KEYS_SOURCE,
        selects=rules.selects if rules is not None else None,
    )
    if facts.merge is not None and facts.head is not None:
        merge = facts.merge
        result.violations[:0] = dropped_entries(merge.ancestor, merge.sides, facts.head, facts.path)
    return result


_MARKER = re.compile(rb"^(<<<<<<<|\|\|\|\|\|\|\||=======|>>>>>>>)(?: |$)", re.M)


def unresolved_conflicts(data: bytes, path: str, merging: bool) -> list[Violation]:
    """One problem per conflict git left in the file, naming the line of each of its markers;
    none when the file holds no start or end marker (a lone `=======` is left to the byte
    rules). Which side holds what is not judged: both are still in the file."""
    if b"<<<<<<<" not in data and b">>>>>>>" not in data:
        return []
    groups: list[list[tuple[int, str]]] = []
    line, offset, open_group = 1, 0, False
    for found in _MARKER.finditer(data):
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
                "conflict-marker",
                "unresolved merge conflict: merge-conflict marker "
                + ", ".join(f"{marker} at line {at}" for at, marker in group),
                fix,
            )
            for group in groups
        ]
    )
