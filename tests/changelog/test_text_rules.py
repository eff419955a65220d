"""Byte rules of a changelog (infx.changelog.text_rules): the conflicts git left in a file,
one problem per conflict. The commands around them: test_conflicts."""

from __future__ import annotations

from infx.changelog.text_rules import unresolved_conflicts


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
