"""infx.argv: arguments that are not UTF-8 text, as the bytes a shell passed."""

from __future__ import annotations

import os

import pytest
from hypothesis import given
from hypothesis import strategies as st

from infx.argv import not_utf8


@pytest.mark.parametrize(
    ("args", "shown"),
    [
        ([], None),
        (["sweep", "plan", "caf\u00e9", "\u2603", ""], None),
        (["ok", "caf\udce9", "\udcff"], "'caf\\xe9'"),
        (["it's\udcff"], '"it\'s\\xff"'),
        (["\ud800"], "'\\\\ud800'"),  # no byte makes it: shown escaped, not a crash
    ],
)
def test_the_first_argument_that_is_not_utf8_is_shown(args: list[str], shown: str | None) -> None:
    assert not_utf8(args) == shown


@given(st.lists(st.text()))
def test_text_that_encodes_is_utf8(args: list[str]) -> None:
    clean = [a.encode("utf-8", "replace").decode("utf-8") for a in args]
    assert not_utf8(clean) is None


@given(st.lists(st.text(max_size=4)), st.binary(min_size=1, max_size=4), st.text(max_size=4))
def test_the_first_bad_argument_is_shown_as_its_bytes(
    before: list[str], raw: bytes, after: str
) -> None:
    clean = [a.encode("utf-8", "replace").decode("utf-8") for a in before]
    arg = os.fsdecode(b"\xff" + raw) + after.encode("utf-8", "replace").decode("utf-8")
    shown = not_utf8([*clean, arg, "\udcfe"])
    assert shown == repr(os.fsencode(arg))[1:]  # the bytes the shell passed, escaped
