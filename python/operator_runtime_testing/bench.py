"""One benchmark case: our prepared op against the peer library, timed the same way."""

import math
from dataclasses import dataclass
from typing import Optional

import numpy as np

from .arrays import NUMPY_DTYPES
from .assertions import TOLERANCES
from .timing import time_cpu, time_gpu


@dataclass
class BenchResult:
    nbytes: int  # each input read once, the output written once
    ours_s: float
    peer_s: float
    ours_graph_s: Optional[float]  # GPU only: CUDA graph replay
    peer_graph_s: Optional[float]
    max_rel_diff: float  # ours against the peer's result, on a sample
    ok: bool


def _sample(lib, array, limit=1 << 20):
    """At most about `limit` evenly spaced elements, as float64."""
    return lib.to_f64(array.reshape(-1)[:: max(1, math.prod(array.shape) // limit)])


def run_bench(op, bench, case, dtype, target, seed):
    """Times bench.prepare(out, *inputs, **params).run() against the peer function
    bench.PEERS[lib.name](peer_out, *inputs, **params) builds (it returns its result)."""
    lib = target.lib
    rng = np.random.default_rng(seed)
    inputs = [lib.randn(rng, shape, dtype) for shape in case.inputs]
    out_shape = op.out_shape([tuple(s) for s in case.inputs], case.params)
    out, peer_out = lib.empty(out_shape, dtype), lib.empty(out_shape, dtype)
    peer = bench.PEERS[lib.name](peer_out, *inputs, **case.params)
    itemsize = NUMPY_DTYPES[dtype].itemsize
    nbytes = itemsize * (sum(math.prod(s) for s in case.inputs) + math.prod(out_shape))

    with bench.prepare(out, *inputs, backend=target.backend, **case.params) as prepared:
        if target.on_gpu:
            ours_s, ours_graph = time_gpu(prepared.run)
            peer_s, peer_graph = time_gpu(peer)
        else:
            ours_s, ours_graph = time_cpu(prepared.run), None
            peer_s, peer_graph = time_cpu(peer), None
    lib.synchronize()

    # Not a test, a guard: a benchmark of a wrong result is worthless.
    ours, theirs = _sample(lib, out), _sample(lib, peer())
    scale = np.abs(theirs).mean() if theirs.size else 0.0
    diff = np.abs(ours - theirs)
    rel = float((diff / (np.abs(theirs) + scale + 1e-30)).max()) if diff.size else 0.0
    ok = rel <= 10 * TOLERANCES[dtype][0] and bool(np.isfinite(ours).all())
    return BenchResult(nbytes, ours_s, peer_s, ours_graph, peer_graph, rel, ok)
