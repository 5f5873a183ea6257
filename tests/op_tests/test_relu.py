"""relu: every case in every dtype, the error cases, and the slope argument's types."""

import numpy as np
import pytest

import operator_runtime as ort
from cases import relu as C
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


def test_infinities_and_nan():
    x = np.array([-np.inf, -1.0, -0.0, 0.0, 2.0, np.inf, np.nan], np.float32)
    np.testing.assert_array_equal(ort.relu(x, backend="cpu"),
                                  [0.0, 0.0, 0.0, 0.0, 2.0, np.inf, np.nan])
    np.testing.assert_array_equal(ort.relu(x, 0.5, backend="cpu"),
                                  [-np.inf, -0.5, -0.0, 0.0, 2.0, np.inf, np.nan])


@pytest.mark.parametrize("slope", [np.float32(0.25), 1, np.float64(0.25)])
def test_slope_types(slope):
    x = np.array([-4.0, 4.0], np.float32)
    np.testing.assert_array_equal(ort.relu(x, slope, backend="cpu"), [-4.0 * float(slope), 4.0])
