"""infx.paths: whether a path, read from the repository root, leaves the repository."""

from __future__ import annotations

import posixpath

import pytest
from hypothesis import given
from hypothesis import strategies as st

from infx import schemas
from infx.paths import outside_repository

# Path components, with the ones that matter drawn often.
COMPONENT = st.one_of(
    st.sampled_from(["", ".", "..", "...", "..a", "a..", "a", "*", "**", "\\", "..\\x"]),
    st.text(alphabet="a./\\*\n ", max_size=6),
)
PATHS = st.lists(COMPONENT, max_size=5).map("/".join)


@pytest.mark.parametrize(
    "path",
    ["/etc/passwd", "//server/x", "..", "../x", "a/..", "a/../b", "a/b/../../..", "./../x"],
)
def test_absolute_paths_and_any_parent_step_are_outside(path: str) -> None:
    assert outside_repository(path)


@pytest.mark.parametrize(
    "path", ["", ".", "a", "./a", "a/b.yaml", "configs/*-master.yaml", "**/x", "...", "..a/b.."]
)
def test_relative_paths_without_a_parent_step_are_inside(path: str) -> None:
    assert not outside_repository(path)


@given(PATHS)
def test_a_path_is_outside_exactly_when_absolute_or_through_a_parent_step(path: str) -> None:
    parts = path.split("/")
    assert outside_repository(path) == ((parts[0] == "" and len(parts) > 1) or ".." in parts)


@given(PATHS)
def test_a_normalized_path_is_outside_exactly_when_it_climbs_above_the_root(path: str) -> None:
    """How a link's target is judged (infx.matrix.inputs): normalized first, so only a
    leading '..' or a leading '/' is left to find."""
    target = posixpath.normpath(path)
    climbs = target.startswith("/") or target == ".." or target.startswith("../")
    assert outside_repository(target) == climbs


@given(PATHS.filter(bool))
def test_the_settings_schema_refuses_the_same_paths(path: str) -> None:
    """infx.toml's path settings are checked by their schema (a pattern, which cannot call
    Python); it must refuse what outside_repository does, plus backslashes."""
    refused = outside_repository(path) or "\\" in path
    assert schemas.is_valid("settings", {"changelog": path}) == (not refused)
    assert schemas.is_valid("settings", {"master-configs": [path]}) == (not refused)
