"""silu against numpy (src / (1 + exp(-src)), CPU) and torch's silu (GPU), both writing into
`out` like ours."""

import numpy as np

import operator_runtime as ort
from benchlib import peers


def prepare(out, src, backend, variant=None):
    return ort.prepare_silu(out, src, backend=backend, variant=variant)


def _numpy(out, src):
    one = np.asarray(1, src.dtype)

    def run():
        with np.errstate(over="ignore"):
            np.exp(np.negative(src, out=out), out=out)
        np.add(out, one, out=out)
        return np.divide(src, out, out=out)
    return run


def _torch(out, src):
    import torch

    # The out= form, so torch writes the rotated output buffers as ours does: an
    # out-of-place call in a CUDA graph writes one reused buffer, which stays in L2.
    return lambda: torch.ops.aten.silu.out(src, out=out)


PEERS = {"numpy": _numpy, "torch": _torch}


GPU_PEERS = {"compile": peers.compiled(lambda torch: torch.nn.functional.silu)}
