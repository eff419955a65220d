"""A run's points of one series packed into one value: what is stored must read back to
the bit (a comparison judges these numbers), NaN standing for a number not measured, in
conc order whatever order the points came in."""

from __future__ import annotations

import math
import struct

import pytest
from hypothesis import given
from hypothesis import strategies as st

from infx.history.packed import WIDTH, pack, unpack

_number = st.one_of(st.none(), st.floats(allow_nan=False, allow_infinity=False))
_point = st.tuples(st.integers(1, 4096), *[_number] * (WIDTH - 1))
_series = st.lists(_point, max_size=12, unique_by=lambda p: p[0])


def _bits(value: float) -> bytes:
    return struct.pack("<d", value)


@given(st.lists(_series, max_size=5))
def test_packed_series_read_back_bit_for_bit_in_conc_order(series: list[list[tuple]]) -> None:
    table, counts = unpack([pack(points) for points in series])
    assert counts.tolist() == [len(points) for points in series]
    wanted = [p for points in series for p in sorted(points, key=lambda p: p[0])]
    assert table.shape == (len(wanted), WIDTH)
    for row, point in zip(table.tolist(), wanted, strict=True):
        assert row[0] == point[0]
        for got, value in zip(row[1:], point[1:], strict=True):
            assert math.isnan(got) if value is None else _bits(got) == _bits(value)


def test_a_point_of_the_wrong_width_is_refused() -> None:
    with pytest.raises(ValueError, match=f"{WIDTH} values"):
        pack([(8, 1.0)])


def test_bytes_that_are_not_whole_rows_are_refused() -> None:
    with pytest.raises(ValueError, match="whole rows"):
        unpack([pack([(8, *[1.0] * (WIDTH - 1))]) + b"\0"])
