"""copy: a transposed (non-contiguous) view becomes a new contiguous array; copy_ broadcasts."""

import numpy as np

from _common import finish, ort, parse_backend, to_backend, to_f64

backend = parse_backend(__doc__)
x = np.random.default_rng(0).standard_normal((1000, 3), dtype=np.float32)
xt = to_backend(x, backend).T  # shape (3, 1000), strides (1, 3): not contiguous

y = ort.copy(xt, backend=backend)
err = np.abs(to_f64(y) - x.T).max()

row = to_backend(x[:, 0].copy(), backend)  # (1000,) broadcast to every row of a (4, 1000) dst
dst = to_backend(np.zeros((4, 1000), np.float32), backend)
ort.copy_(dst, row, backend=backend)
err = max(err, np.abs(to_f64(dst) - x[:, 0]).max())

finish("01_copy", backend, "transposed (3, 1000) f32 view and a broadcast row", err, 0.0)
