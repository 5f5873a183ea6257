"""Prepared ops: create the descriptor and workspace once, run many times on new data.

prepare_softmax plans once; run_inputs takes new arrays of the same shapes, strides and
dtype and checks only that they match, so a loop over batches skips the planning and the
descriptor's creation."""

import time

import numpy as np

from _common import finish, ort, parse_backend, to_backend, to_f64

backend = parse_backend(__doc__)
rng = np.random.default_rng(0)
batches = [rng.standard_normal((64, 4096), dtype=np.float32) for _ in range(8)]
out = to_backend(np.empty((64, 4096), np.float32), backend)

err = 0.0
start = time.perf_counter()
with ort.prepare_softmax(out, to_backend(batches[0], backend), dim=1, backend=backend) as op:
    for batch in batches:
        op.run_inputs(out, to_backend(batch, backend))
        x = batch.astype(np.float64)
        e = np.exp(x - x.max(axis=1, keepdims=True))
        err = max(err, np.abs(to_f64(out) - e / e.sum(axis=1, keepdims=True)).max())
    print(f"{op} ran {len(batches)} batches in {time.perf_counter() - start:.3f} s "
          f"(checks included), workspace {op.workspace_size} bytes")

finish("05_prepared_ops", backend, f"{len(batches)} batches of (64, 4096) through one descriptor",
       err, 1e-6)
