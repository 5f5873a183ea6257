"""vector_add: every case in every dtype, the error cases, and in place into b."""

import numpy as np
import pytest

import operator_runtime as ort
from cases import vector_add as C
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
