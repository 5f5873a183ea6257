"""softmax beyond the shared cases of test_cases.py: its invariants."""

import numpy as np
import pytest

import operator_runtime as ort
from operator_runtime_testing.assertions import assert_close


@pytest.mark.parametrize("dim", [0, 1, -1, np.int32(2)])
def test_slices_sum_to_one(dim, target, seed):
    src = target.lib.randn(np.random.default_rng(seed), (4, 5, 6))
    out = target.lib.to_f64(ort.softmax(src, dim, backend=target.backend))
    assert (out >= 0).all()
    sums = out.sum(axis=int(dim))
    assert_close(sums, np.ones_like(sums), "f32")


def test_large_inputs_do_not_overflow():
    x = np.array([[1000.0, 1000.0], [-1000.0, 0.0]], np.float32)
    np.testing.assert_allclose(ort.softmax(x, backend="cpu"), [[0.5, 0.5], [0.0, 1.0]])
