"""silu beyond the shared cases of test_cases.py (which run every case of
tests/cases/silu.py in every dtype, NaN/inf data included): the special values,
the tails where exp over- or underflows, and subnormal inputs."""

import numpy as np
import pytest

import operator_runtime as ort
from operator_runtime_testing import DTYPES, assertions, reference

SPECIALS = [-np.inf, -1e30, -100.0, -1.0, -0.0, 0.0, 1e-30, 1.0, 100.0, 1e30, np.inf, np.nan]


def _silu(target, x64, dtype):
    """(silu of x64 held in dtype, as float64; that input as float64)."""
    x = assertions.round_to(x64, dtype)  # the reference sees the values the kernel sees
    got = ort.silu(target.lib.from_numpy(x, dtype), backend=target.backend)
    return target.lib.to_f64(got), x


def test_special_values(target):
    x64 = np.array(SPECIALS)
    for dtype in DTYPES:
        got, x = _silu(target, x64, dtype)
        assertions.assert_close(got, reference.silu(x), dtype,
                                what=f"silu of special values ({dtype})")


@pytest.mark.parametrize("dtype", DTYPES)
def test_infinities_and_nan_exactly(dtype, target):
    """silu(-inf) = -0 (the limit; PyTorch's formula gives NaN), silu(inf) = inf,
    silu(NaN) = NaN, silu(+-0) = +-0."""
    got, _ = _silu(target, np.array([-np.inf, np.inf, np.nan, 0.0, -0.0]), dtype)
    assert got[0] == 0.0 and np.signbit(got[0]), got[0]
    assert got[1] == np.inf and np.isnan(got[2]), got
    assert got[3] == 0.0 and not np.signbit(got[3]) and np.signbit(got[4]), got


@pytest.mark.parametrize("dtype", DTYPES)
def test_tails(dtype, target):
    """Large |x|, where exp(-x) overflows (x < -88 in f32) or sigmoid rounds to 1: never
    NaN, -0 or a tiny negative on the left, x itself on the right."""
    x64 = np.concatenate([-np.geomspace(1e-3, 3e38, 2001), np.geomspace(1e-3, 3e38, 2001),
                          np.linspace(-120.0, 120.0, 4801)])
    got, x = _silu(target, x64, dtype)
    assert not np.isnan(got).any()
    assertions.assert_close(got, reference.silu(x), dtype, what=f"silu tails ({dtype})")
    left = x < -120.0
    assert (got[left] <= 0.0).all() and (np.abs(got[left]) < 1e-30).all()


def test_subnormal_inputs(target):
    """silu(x) = x / 2 near 0: subnormal f32 inputs are neither flushed nor mangled."""
    x64 = np.array([1e-45, -1e-45, 1e-40, -3e-39, 1e-38], np.float32).astype(np.float64)
    got, x = _silu(target, x64, "f32")
    assertions.assert_close(got, reference.silu(x), "f32", tol=(1e-6, 0.0),
                            what="silu of subnormals")
