"""reduce_sum: over the last dim, over dim 0 keeping it, and over every element (dim=None)."""

import numpy as np

from _common import finish, ort, parse_backend, to_backend, to_f64

backend = parse_backend(__doc__)
x = np.random.default_rng(0).standard_normal((256, 1000), dtype=np.float32)
xb = to_backend(x, backend)
x64 = x.astype(np.float64)

checks = [
    (ort.reduce_sum(xb, dim=-1, backend=backend), x64.sum(axis=-1)),
    (ort.reduce_sum(xb, dim=0, keepdim=True, backend=backend), x64.sum(axis=0, keepdims=True)),
    (ort.reduce_sum(xb, dim=None, backend=backend), x64.sum()),
]
err = 0.0
for got, expected in checks:
    got = to_f64(got)
    assert got.shape == expected.shape, (got.shape, expected.shape)
    # f32 accumulation: the error scales with the magnitude of what was added up
    err = max(err, np.abs(got - expected).max() / np.abs(x64).sum())

finish("03_reduce_sum", backend, "(256, 1000) f32 over dim -1, dim 0 (keepdim) and all",
       err, 1e-6)
