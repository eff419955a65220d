"""The few distributions the noise model needs, in NumPy alone: Student's t (lower tail and
quantile, for whole arrays at once), the normal, a chi-square quantile, and the digamma and
trigamma functions for the variances' prior.

SciPy would give them too, but importing `scipy.special` costs about 0.1 s, a tenth of the
time a whole comparison may take, and these closed forms are exact for the integer degrees
of freedom the model uses (Abramowitz and Stegun 26.7.3 and 26.7.4).
"""

from __future__ import annotations

import functools
import math
from statistics import NormalDist

import numpy as np

# Beyond this many degrees of freedom Student's t is the normal (to about 1e-3 of its
# quantiles); `math.inf` degrees of freedom name the normal itself.
NORMAL_DF = 400
_NORMAL = NormalDist()


def _as(df: np.ndarray | float, like: np.ndarray) -> np.ndarray:
    out: np.ndarray = np.broadcast_to(np.asarray(df, dtype=float), like.shape)
    return out


def norm_cdf(x: np.ndarray) -> np.ndarray:
    """P(Z <= x), elementwise (erfc keeps the far lower tail exact)."""
    z = np.asarray(x, dtype=float)
    out: np.ndarray = np.asarray(0.5 * _erfc(-z / math.sqrt(2.0)), dtype=float)
    return out


_erfc = np.frompyfunc(math.erfc, 1, 1)


def t_cdf(t: np.ndarray | float, df: np.ndarray | float) -> np.ndarray:
    """P(T <= t) for Student's t with `df` degrees of freedom, elementwise. `df` is rounded
    down to an integer (at least 1); above NORMAL_DF, or infinite, it is the normal."""
    t = np.asarray(t, dtype=float)
    nu = np.floor(_as(df, t))
    nu = np.where(np.isfinite(nu), np.maximum(nu, 1.0), np.inf)
    out = np.empty(t.shape, dtype=float)
    normal = nu > NORMAL_DF
    if normal.any():
        out[normal] = np.asarray(norm_cdf(t[normal]), dtype=float)
    rest = ~normal
    if rest.any():
        out[rest] = _t_cdf_int(t[rest], nu[rest])
    return out


def _t_cdf_int(t: np.ndarray, nu: np.ndarray) -> np.ndarray:
    """A&S 26.7.3 (odd) and 26.7.4 (even): a finite sum in cos(theta)^2."""
    theta = np.arctan(t / np.sqrt(nu))
    s, c = np.sin(theta), np.cos(theta)
    c2 = c * c
    odd = (nu % 2) == 1
    # even: s * sum_{k < nu/2} a_k c^(2k), a_0 = 1, a_k = a_(k-1) (2k-1)/(2k)
    # odd: (2/pi) (theta + s c sum_{k < (nu-1)/2} b_k c^(2k)), b_0 = 1, b_k = b_(k-1) 2k/(2k+1)
    terms = np.where(odd, (nu - 1) / 2, nu / 2).astype(int)
    total = np.zeros_like(t)
    term = np.ones_like(t)
    for k in range(int(terms.max(initial=0))):
        live = k < terms
        if not live.any():
            break
        total += np.where(live, term, 0.0)
        ratio = np.where(odd, (2 * k + 2) / (2 * k + 3), (2 * k + 1) / (2 * k + 2))
        term = term * ratio * c2
    area = np.where(odd, (2 / math.pi) * (theta + s * c * total), s * total)
    out: np.ndarray = np.clip(0.5 + 0.5 * area, 0.0, 1.0)
    return out


def _t_cdf_one(t: float, nu: float) -> float:
    """`_t_cdf_int` for one value, in plain floats: the same operations in the same order,
    so the same bits (libm's atan, sin and cos are what NumPy calls for float64)."""
    theta = math.atan(t / math.sqrt(nu))
    s, c = math.sin(theta), math.cos(theta)
    c2 = c * c
    odd = nu % 2 == 1
    total, term = 0.0, 1.0
    for k in range(int((nu - 1) / 2 if odd else nu / 2)):
        total += term
        term = term * ((2 * k + 2) / (2 * k + 3) if odd else (2 * k + 1) / (2 * k + 2)) * c2
    area = (2 / math.pi) * (theta + s * c * total) if odd else s * total
    return min(max(0.5 + 0.5 * area, 0.0), 1.0)


# A comparison asks for the same few levels at the same few degrees of freedom many times
# over (30 to 1,000 distinct pairs); a long loop of comparisons (bench_real_noise) stays
# bounded.
@functools.lru_cache(maxsize=8192)
def _quantile(p: float, nu: float) -> float:
    """Bisection on the angle arctan(t / sqrt(df)), 60 halvings, so even p = 1e-12 at one
    degree of freedom is found; the normal's quantile above NORMAL_DF."""
    if not math.isfinite(nu) or math.floor(nu) > NORMAL_DF:
        return _NORMAL.inv_cdf(min(max(p, 1e-300), 1 - 1e-16))
    n = max(math.floor(nu), 1.0)
    root = math.sqrt(n)
    lo, hi = -math.pi / 2, math.pi / 2
    for _ in range(60):
        mid = (lo + hi) / 2
        if _t_cdf_one(root * math.tan(mid), n) < p:
            lo = mid
        else:
            hi = mid
    return root * math.tan((lo + hi) / 2)


def t_ppf(p: np.ndarray | float, df: np.ndarray | float) -> np.ndarray:
    """The quantile of Student's t: the t with P(T <= t) = p, elementwise. The model asks
    for a few distinct (p, df) pairs over thousands of elements: each pair is solved once,
    in plain floats, where a vectorised bisection spent its time on NumPy's overhead per call."""
    p = np.asarray(p, dtype=float)
    whole = np.floor(_as(df, p))
    # the degrees of freedom as the quantile reads them: whole, at least 1; the normal's
    # (infinite) when not finite or above NORMAL_DF
    nu = np.where(np.isfinite(whole) & (whole <= NORMAL_DF), np.maximum(whole, 1.0), np.inf)
    # complex numbers sort by (real, imaginary): one 1-D unique over the pairs (set part by
    # part: 1j * inf would make the real part NaN)
    pairs = p.astype(complex).ravel()
    pairs.imag = nu.ravel()
    unique, inverse = np.unique(pairs, return_inverse=True, equal_nan=False)
    found = np.empty(len(unique))
    for i, pair in enumerate(unique.tolist()):
        found[i] = _quantile(pair.real, pair.imag)
    out: np.ndarray = found[inverse.ravel()].reshape(p.shape)
    return out


def t_quantile(p: float, df: float) -> float:
    return float(t_ppf(np.array(p), np.array(df)))


def chi2_isf(alpha: float, k: float) -> float:
    """The chi-square value with `k` degrees of freedom exceeded with probability `alpha`
    (Wilson and Hilferty's cube-root approximation, within a few percent for k >= 1)."""
    z = _NORMAL.inv_cdf(1 - alpha)
    h = 2.0 / (9.0 * k)
    return float(k * (1 - h + z * math.sqrt(h)) ** 3)


def digamma(x: np.ndarray) -> np.ndarray:
    """psi(x) for x > 0: the recurrence up to 6, then the asymptotic series."""
    x = np.asarray(x, dtype=float).copy()
    out = np.zeros_like(x)
    while (small := x < 6).any():
        out -= np.where(small, 1 / x, 0.0)
        x = np.where(small, x + 1, x)
    inv2 = 1 / (x * x)
    out += np.log(x) - 0.5 / x - inv2 * (1 / 12 - inv2 * (1 / 120 - inv2 / 252))
    return out


def trigamma(x: np.ndarray) -> np.ndarray:
    """psi'(x) for x > 0: the recurrence up to 6, then the asymptotic series."""
    x = np.asarray(x, dtype=float).copy()
    out = np.zeros_like(x)
    while (small := x < 6).any():
        out += np.where(small, 1 / (x * x), 0.0)
        x = np.where(small, x + 1, x)
    inv = 1 / x
    inv2 = inv * inv
    out += inv + inv2 / 2 + inv * inv2 * (1 / 6 - inv2 * (1 / 30 - inv2 / 42))
    return out
