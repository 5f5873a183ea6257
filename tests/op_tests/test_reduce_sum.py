"""reduce_sum: every case in every dtype, the error cases, and the result's shape and type."""

import numpy as np
import pytest

import operator_runtime as ort
from cases import reduce_sum as C
from operator_runtime_testing import DTYPES, run_case, run_error_case


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("case", C.CASES, ids=lambda c: c.name)
def test_case(case, dtype, target, seed):
    result = run_case(C.OP, case, dtype, target.lib, target.backend, seed,
                      torch_check=target.on_gpu)
    assert result.ok, f"{result.message} (seed {seed})"


@pytest.mark.parametrize("err", C.ERROR_CASES, ids=lambda e: e.name)
def test_error(err, target):
    if target.lib.name not in err.libs:
        pytest.skip(f"{err.name} needs {' or '.join(err.libs)} arrays")
    ok, message = run_error_case(err, target.lib, target.backend)
    assert ok, message


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
