"""The distributions the noise model computes in NumPy (infx/results/noise/tdist.py, kept out of
SciPy for import time) agree with SciPy's, the reference the field trusts."""

from __future__ import annotations

import numpy as np
import pytest

from infx.results.noise import tdist

stats = pytest.importorskip("scipy.stats")
special = pytest.importorskip("scipy.special")

T = np.array([-40.0, -6.0, -2.5, -1.0, -0.1, 0.0, 0.3, 1.7, 3.0, 12.0])
DF = [1, 2, 3, 4, 7, 8, 15, 30, 120, 399, 401, 10_000]


@pytest.mark.parametrize("df", DF)
def test_t_cdf_matches_scipy(df: int) -> None:
    got = tdist.t_cdf(T, float(df))
    want = stats.t.cdf(T, df)
    # Above NORMAL_DF the normal stands in for t: within 1e-3 there, exact below.
    tol = 1e-3 if df > tdist.NORMAL_DF else 1e-10
    np.testing.assert_allclose(got, want, rtol=tol, atol=1e-13 if df <= tdist.NORMAL_DF else tol)


@pytest.mark.parametrize("df", [d for d in DF if d <= tdist.NORMAL_DF])
def test_t_ppf_inverts_scipy(df: int) -> None:
    p = np.array([1e-12, 1e-6, 0.001, 0.025, 0.3, 0.5, 0.9, 0.975, 0.999999])
    # Bisection on the angle: within 1e-4 relative even at p = 1e-12 with one degree of freedom.
    np.testing.assert_allclose(tdist.t_ppf(p, float(df)), stats.t.ppf(p, df), rtol=1e-4, atol=1e-12)


def test_gamma_functions_and_chi_square_match_scipy() -> None:
    x = np.array([0.05, 0.5, 1.0, 2.5, 6.0, 40.0, 1e4])
    np.testing.assert_allclose(tdist.digamma(x), special.digamma(x), rtol=1e-8, atol=1e-8)
    np.testing.assert_allclose(tdist.trigamma(x), special.polygamma(1, x), rtol=1e-7)
    for k in (1, 3, 10, 60):
        # Wilson-Hilferty: "within a few percent for k >= 1", as its docstring says.
        assert tdist.chi2_isf(0.05, k) == pytest.approx(stats.chi2.isf(0.05, k), rel=0.03)


def test_t_ppf_solves_each_pair_of_an_array_as_if_alone() -> None:
    """Pairs are solved once each and handed back in place: no pair takes another's value,
    df is read whole (3.7 is 3), and a df that is not finite or above NORMAL_DF is the
    normal's quantile."""
    rng = np.random.default_rng(3)
    p = rng.choice([0.001, 0.5, 0.8, 0.975], size=(40, 3))
    df = rng.choice([1.0, 2.5, 3.0, 3.7, 19.0, np.inf, np.nan, 401.0], size=(40, 3))
    got = tdist.t_ppf(p, df)
    alone = np.vectorize(tdist.t_quantile)(p, df)
    assert np.array_equal(got, alone)
    assert tdist.t_quantile(0.975, 3.7) == tdist.t_quantile(0.975, 3.0)
    normal = tdist.t_quantile(0.975, np.inf)
    assert tdist.t_quantile(0.975, np.nan) == tdist.t_quantile(0.975, 1e6) == normal
    assert normal == pytest.approx(1.959964, abs=1e-6)
