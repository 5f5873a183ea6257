"""relu and leaky relu (negative_slope) in bfloat16, into a new array and exactly in place."""

import ml_dtypes
import numpy as np

from _common import finish, ort, parse_backend, to_backend, to_f64

backend = parse_backend(__doc__)
x = np.random.default_rng(0).standard_normal((512, 300)).astype(ml_dtypes.bfloat16)
x64 = x.astype(np.float64)
xb = to_backend(x, backend)

plain = ort.relu(xb, backend=backend)
leaky = ort.copy(xb, backend=backend)
ort.relu_(leaky, leaky, negative_slope=0.1, backend=backend)  # out is src itself: allowed

err = np.abs(to_f64(plain) - np.maximum(x64, 0)).max()  # relu of a bf16 is that bf16: exact
expected = np.where(x64 > 0, x64, np.float32(0.1) * x64)
# 0.1 * x is rounded to bf16 once: within 2^-8 of the value
err = max(err, (np.abs(to_f64(leaky) - expected) / np.abs(expected).clip(1e-30)).max())

finish("06_relu", backend, "(512, 300) bf16 relu, and leaky relu in place", err, 2.0 ** -8)
