"""infx.numbers: whole numbers given as text, and SQLite's INTEGER bound."""

from __future__ import annotations

import sqlite3
from collections.abc import Iterator
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from infx import schemas
from infx.numbers import SQLITE_INTEGER_END, decimal


@pytest.mark.parametrize(
    ("text", "below", "expected"),
    [
        ("0", 10, 0),
        ("9", 10, 9),
        ("10", 10, None),
        ("007", 10, 7),
        ("000", 1, 0),
        (str(SQLITE_INTEGER_END - 1), SQLITE_INTEGER_END, SQLITE_INTEGER_END - 1),
        (str(SQLITE_INTEGER_END), SQLITE_INTEGER_END, None),
        ("0" * 5000 + "42", 100, 42),
    ],
)
def test_ascii_digits_below_the_bound_are_their_value(
    text: str, below: int, expected: int | None
) -> None:
    assert decimal(text, below=below) == expected


@pytest.mark.parametrize(
    "text", ["", " 1", "1 ", "+1", "-1", "1_0", "1.0", "0x1", "\u00b2", "\u0661", "1e3", "abc"]
)
def test_anything_but_ascii_digits_is_none(text: str) -> None:
    """int() takes several of these (' 1', '+1', '1_0', Arabic-Indic '١'); isdigit() '²'."""
    assert decimal(text, below=SQLITE_INTEGER_END) is None


def test_a_number_too_long_for_int_is_none_not_a_crash() -> None:
    assert decimal("9" * 5000, below=SQLITE_INTEGER_END) is None


@given(st.integers(min_value=0, max_value=10**30), st.integers(min_value=1, max_value=10**25))
def test_a_value_parses_back_exactly_when_below_the_bound(value: int, below: int) -> None:
    assert decimal(str(value), below=below) == (value if value < below else None)


@given(st.text(max_size=12))
def test_whatever_parses_is_ascii_digits_and_below_the_bound(text: str) -> None:
    number = decimal(text, below=1000)
    if number is not None:
        assert text.isascii() and text.isdigit() and int(text) == number < 1000


def test_the_bound_is_one_past_what_sqlite_stores() -> None:
    with sqlite3.connect(":memory:") as db:
        db.execute("create table t (n integer)")
        db.execute("insert into t values (?)", (SQLITE_INTEGER_END - 1,))
        with pytest.raises(OverflowError):
            db.execute("insert into t values (?)", (SQLITE_INTEGER_END,))


def _maxima(node: Any) -> Iterator[int]:
    if isinstance(node, dict):
        if "maximum" in node:
            yield node["maximum"]
        for value in node.values():
            yield from _maxima(value)
    elif isinstance(node, list):
        for value in node:
            yield from _maxima(value)


def test_the_result_schema_bounds_its_integers_by_it() -> None:
    """A result table's integers go into the history: the schema's maxima (JSON cannot
    name the constant) are the largest INTEGER SQLite stores."""
    integers = [m for m in _maxima(schemas.load("result")) if isinstance(m, int) and m > 1000]
    assert integers and set(integers) == {SQLITE_INTEGER_END - 1}
