"""vector_add: numpy broadcasting, a (1000, 512) matrix plus a (512,) row, in f32 and f16."""

import numpy as np

from _common import finish, ort, parse_backend, to_backend, to_f64

backend = parse_backend(__doc__)
rng = np.random.default_rng(0)
worst = 0.0  # the largest error, in units of its dtype's tolerance
for dtype, tol in ((np.float32, 1e-6), (np.float16, 1e-3)):
    a = rng.standard_normal((1000, 512)).astype(dtype)
    b = rng.standard_normal(512).astype(dtype)
    out = ort.vector_add(to_backend(a, backend), to_backend(b, backend), backend=backend)
    expected = a.astype(np.float64) + b.astype(np.float64)
    err = np.abs(to_f64(out) - expected) / (np.abs(expected) + 1)  # relative; absolute near 0
    worst = max(worst, err.max() / tol)

finish("02_vector_add", backend, "(1000, 512) + (512,) in f32 and f16 (error / tolerance)",
       worst, 1.0)
