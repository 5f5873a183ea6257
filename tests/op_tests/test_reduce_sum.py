"""reduce_sum beyond the shared cases of test_cases.py: the result's shape and type."""

import numpy as np
import pytest

import operator_runtime as ort


@pytest.mark.parametrize("dim, keepdim, shape", [
    (None, False, ()), (None, True, (1, 1, 1)), (1, False, (2, 4)), (-2, True, (2, 1, 4)),
    (np.int64(0), False, (3, 4)),
])
def test_result_shape(dim, keepdim, shape, target, seed):
    src = target.lib.randn(np.random.default_rng(seed), (2, 3, 4))
    out = ort.reduce_sum(src, dim, keepdim, backend=target.backend)
    assert isinstance(out, target.lib.array_type) and tuple(out.shape) == shape


def test_empty_axis_sums_to_zero(target):
    out = ort.reduce_sum(target.lib.empty((3, 0)), dim=1, backend=target.backend)
    np.testing.assert_array_equal(target.lib.to_f64(out), np.zeros(3))
