"""vector_add beyond the shared cases of test_cases.py: in place into b."""

import numpy as np
import pytest

import operator_runtime as ort
from operator_runtime_testing.assertions import assert_close


def test_in_place_into_b(target, seed):
    lib, rng = target.lib, np.random.default_rng(seed)
    a, b = lib.randn(rng, (3, 65)), lib.randn(rng, (3, 65))
    expected = lib.to_f64(a) + lib.to_f64(b)
    assert ort.vector_add_(b, a, b, backend=target.backend) is b
    assert_close(lib.to_f64(b), expected, "f32")


def test_result_shape_and_dtype(target, seed):
    lib, rng = target.lib, np.random.default_rng(seed)
    a, b = lib.randn(rng, (4, 1, 5), "bf16"), lib.randn(rng, (3, 1), "bf16")
    out = ort.vector_add(a, b, backend=target.backend)
    assert tuple(out.shape) == (4, 3, 5) and out.dtype == a.dtype
