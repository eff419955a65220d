"""`infx changelog check` as a function of what was read: the verdict on one changelog edit.

Besides the rules of `check`, the gate knows where the edit happens: during a merge, every
entry the result drops from either side is named.
"""

from __future__ import annotations

from collections.abc import Callable, Collection
from dataclasses import dataclass

from infx.changelog.check import DEFAULT_KEYS_SOURCE, CheckResult, check
from infx.changelog.links import LinkPolicy
from infx.changelog.merge import dropped_entries
from infx.changelog.model import Entry


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
    """The verdict: every rule, with the entries a merge in progress drops."""
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
