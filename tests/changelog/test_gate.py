"""The gate's own rules as functions of bytes (infx.changelog.gate): the branch entries an
identical merge took as main's. The commands around them: test_identical_appends."""

from __future__ import annotations

from infx.changelog.gate import (
    BranchCommit,
    GateFacts,
    gate,
    vanished_entries,
)
from tests.conftest import HISTORY, entry

SAME = entry(description="Raise the concurrency ceiling")


def test_only_appends_main_holds_byte_for_byte_are_named() -> None:
    history = (HISTORY + "\n" + SAME).encode()
    appended = BranchCommit("a" * 40, HISTORY.encode(), history)
    edited = BranchCommit("b" * 40, history, history.replace(b"Raise", b"Lower"))
    other = BranchCommit("c" * 40, HISTORY.encode(), (HISTORY + "\n" + entry()).encode())
    found = vanished_entries(history, [appended, edited, other])
    assert [(v.line, v.rule) for v in found] == [(HISTORY.count("\n") + 2, "merge")]
    assert f"commit {'a' * 12} of this branch" in found[0].message


def test_the_branch_is_read_only_when_nothing_is_appended() -> None:
    def refuse() -> list[BranchCommit]:
        raise AssertionError("read although entries are appended")

    head = (HISTORY + "\n" + SAME).encode()
    facts = GateFacts("perf-changelog.yaml", HISTORY.encode(), head, None, branch_commits=refuse)
    assert gate(facts, None).ok
