"""silu beyond the shared cases of test_cases.py (which run every case of
tests/cases/silu.py in every dtype): exact values at the special inputs."""

import numpy as np

import operator_runtime as ort
from operator_runtime_testing import assertions, reference

SPECIALS = [-np.inf, -1e30, -100.0, -1.0, -0.0, 0.0, 1e-30, 1.0, 100.0, 1e30, np.inf, np.nan]


def test_special_values(target):
    x64 = np.array(SPECIALS)
    for dtype in ("f32", "f16", "bf16"):
        got = ort.silu(target.lib.from_numpy(x64, dtype), backend=target.backend)
        assertions.assert_close(target.lib.to_f64(got), reference.silu(x64), dtype,
                                what=f"silu of special values ({dtype})")
