"""softmax: every case in every dtype, the error cases, and its invariants."""

import numpy as np
import pytest

import operator_runtime as ort
from cases import softmax as C
from operator_runtime_testing import DTYPES, run_case, run_error_case
from operator_runtime_testing.assertions import assert_close


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
