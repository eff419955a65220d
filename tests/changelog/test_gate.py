"""The gate's own rules as functions of bytes (infx.changelog.gate): conflict markers and the
branch entries an identical merge took as main's. The commands around them: test_conflicts,
test_identical_appends."""

from __future__ import annotations

from infx.changelog.gate import (
    BranchCommit,
    GateFacts,
    gate,
    unresolved_conflicts,
    vanished_entries,
)
from tests.conftest import HISTORY, entry

SAME = entry(description="Raise the concurrency ceiling")


def test_each_conflict_is_one_problem_with_its_markers_lines() -> None:
    text = (
        "a\n<<<<<<< ours\nb\n||||||| base\n=======\nc\n>>>>>>> theirs\n"
        "d\n<<<<<<< ours\ne\n=======\n>>>>>>> theirs\n"
    )
    found = unresolved_conflicts(text.encode(), "perf-changelog.yaml", merging=False)
    assert [v.line for v in found] == [2, 9]
    assert found[0].message == (
        "unresolved merge conflict: merge-conflict marker <<<<<<< at line 2, ||||||| at line 4, "
        "======= at line 5, >>>>>>> at line 7"
    )
    assert "delete the marker lines of perf-changelog.yaml" in found[0].fix
    during = unresolved_conflicts(text.encode(), "perf-changelog.yaml", merging=True)
    assert "infx changelog resolve-conflict" in during[0].fix


def test_a_lone_separator_line_or_a_marker_inside_a_line_is_no_conflict() -> None:
    assert unresolved_conflicts(b"a\n=======\nb\n", "f", merging=False) == []
    assert unresolved_conflicts(b'    - "<<<<<<< HEAD"\n', "f", merging=False) == []


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
