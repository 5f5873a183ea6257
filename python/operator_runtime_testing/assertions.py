"""Comparing results with a float64 reference: tolerances by dtype, NaN/inf positions.

The reference is rounded to the output dtype first (so overflow to inf and the
one rounding every kernel makes are expected), then |got - ref| <= atol +
rtol * |ref| must hold wherever ref is finite; NaN must sit exactly where the
reference has NaN, and infinities must match exactly.
"""

import math

import numpy as np

from .arrays import NUMPY_DTYPES

EPS_F32 = 2.0 ** -24  # unit roundoff of the f32 accumulators

# (rtol, atol) per output dtype: a few roundings of that dtype.
TOLERANCES = {"f32": (1e-5, 1e-6), "f16": (1e-3, 1e-5), "bf16": (1e-2, 1e-4)}


def exact():
    """For results that are one input value (copy, relu with negative_slope 0)."""
    return 0.0, 0.0


def elementwise(dtype):
    return TOLERANCES[dtype]


def reduction(dtype, axis_len, l2_norm):
    """A sum over `axis_len` elements accumulated in f32: rounding errors grow with the
    number of terms and the size of the partial sums (bounded by the inputs' L2 norm,
    `l2_norm`, one value per output)."""
    rtol, atol = TOLERANCES[dtype]
    return rtol, atol + 2.0 * EPS_F32 * math.sqrt(max(axis_len, 1)) * l2_norm


def softmax(dtype, axis_len):
    """exp and a sum of `axis_len` positive f32 terms: relative error grows like sqrt(n)."""
    rtol, atol = TOLERANCES[dtype]
    return rtol + 4.0 * EPS_F32 * math.sqrt(max(axis_len, 1)), atol


def round_to(ref, dtype):
    """The float64 reference as the output dtype would hold it."""
    with np.errstate(over="ignore"):
        return np.asarray(ref, dtype=np.float64).astype(NUMPY_DTYPES[dtype]).astype(np.float64)


def compare(got, ref, rtol, atol):
    """(ok, max_abs_err, message) for float64 arrays `got` and `ref` (ref already rounded)."""
    got = np.asarray(got, dtype=np.float64)
    ref = np.asarray(ref, dtype=np.float64)
    if got.shape != ref.shape:
        return False, math.inf, f"shape {got.shape} != reference shape {ref.shape}"
    nan_got, nan_ref = np.isnan(got), np.isnan(ref)
    if (nan_got != nan_ref).any():
        i = _first(nan_got != nan_ref)
        return False, math.inf, f"NaN mismatch at {i}: got {got[i]}, expected {ref[i]}"
    inf_ref = np.isinf(ref)
    finite = ~(nan_ref | inf_ref)
    inf_bad = (inf_ref & (got != ref)) | (finite & np.isinf(got))
    if inf_bad.any():
        i = _first(inf_bad)
        return False, math.inf, f"inf mismatch at {i}: got {got[i]}, expected {ref[i]}"
    err = np.where(finite, np.abs(got - np.where(finite, ref, 0.0)), 0.0)
    bound = atol + rtol * np.abs(np.where(finite, ref, 0.0))
    max_err = float(err.max()) if err.size else 0.0
    bad = err > bound
    if bad.any():
        i = _first(bad)
        bound_i = np.broadcast_to(bound, err.shape)[i]
        return False, max_err, (f"{int(bad.sum())} of {err.size} elements differ; first at {i}: "
                                f"got {got[i]!r}, expected {ref[i]!r} (|diff| "
                                f"{err[i]:.3g} > tolerance {bound_i:.3g})")
    return True, max_err, ""


def _first(mask):
    return tuple(int(i) for i in np.argwhere(mask)[0]) if mask.ndim else ()


def assert_close(got, ref, dtype, tol=None, what="result"):
    """Asserts `got` (float64) matches the float64 reference `ref` for an output of `dtype`,
    within `tol` = (rtol, atol) (default: elementwise(dtype))."""
    ok, _, message = compare(got, round_to(ref, dtype), *(tol or elementwise(dtype)))
    assert ok, f"{what}: {message}"
