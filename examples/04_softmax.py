"""softmax along the last dim, against a float64 numpy softmax; a row of -inf gives NaN."""

import numpy as np

from _common import finish, ort, parse_backend, to_backend, to_f64

backend = parse_backend(__doc__)
x = 3 * np.random.default_rng(0).standard_normal((128, 1000), dtype=np.float32)
x[7] = -np.inf  # softmax of nothing but -inf is undefined: NaN, as in PyTorch

y = to_f64(ort.softmax(to_backend(x, backend), dim=-1, backend=backend))

x64 = x.astype(np.float64)
with np.errstate(invalid="ignore"):
    e = np.exp(x64 - x64.max(axis=-1, keepdims=True))
expected = e / e.sum(axis=-1, keepdims=True)
finite = np.isfinite(expected)
err = np.abs(y[finite] - expected[finite]).max()
if not np.array_equal(np.isnan(y), np.isnan(expected)):
    err = np.inf

finish("04_softmax", backend, "(128, 1000) f32 rows, one of them all -inf", err, 1e-6)
