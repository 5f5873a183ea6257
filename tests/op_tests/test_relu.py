"""relu beyond the shared cases of test_cases.py: the slope argument's types."""

import numpy as np
import pytest

import operator_runtime as ort


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
