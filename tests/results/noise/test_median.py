"""infx's NaN-skipping median gives NumPy's nanmedian to the bit, on any shape and axis,
with NaN, infinities and empty rows, without loading numpy.ma."""

from __future__ import annotations

import subprocess
import sys
import warnings

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis.extra.numpy import array_shapes, arrays

from infx.results.noise.median import nanmedian

VALUES = st.one_of(
    st.floats(min_value=-1e300, max_value=1e300, width=64),
    st.sampled_from([float("nan"), float("inf"), float("-inf")]),
)


@settings(max_examples=300, deadline=None)
@given(
    arrays(
        np.float64, array_shapes(min_dims=1, max_dims=3, min_side=0, max_side=6), elements=VALUES
    ),
    st.data(),
)
def test_it_is_numpys_nanmedian_to_the_bit(values: np.ndarray, data: st.DataObject) -> None:
    axis = data.draw(st.sampled_from([None, *range(values.ndim)]))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        expected = np.nanmedian(values, axis=axis)
    got = nanmedian(values, axis=axis)
    assert np.shape(got) == np.shape(expected)
    assert np.array_equal(got, expected, equal_nan=True)


def test_long_rows_take_numpys_other_path_and_still_agree() -> None:
    values = np.random.default_rng(7).standard_normal((3, 701))
    values[values > 1.2] = np.nan
    assert np.array_equal(nanmedian(values, axis=1), np.nanmedian(values, axis=1))


def test_a_row_without_values_is_nan() -> None:
    got = nanmedian(np.array([[np.nan, np.nan], [1.0, 3.0]]), axis=1)
    assert np.isnan(got[0]) and got[1] == 2.0


def test_it_does_not_load_numpy_ma() -> None:
    code = (
        "import sys, numpy as np\n"
        "from infx.results.noise.median import nanmedian\n"
        "nanmedian(np.array([[1.0, np.nan, 3.0]]), axis=1)\n"
        "print('numpy.ma' in sys.modules)\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "False"
