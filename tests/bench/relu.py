"""relu against np.maximum(x, 0, out=) (negative_slope 0) or a numpy select, and torch."""

import numpy as np

import operator_runtime as ort
from benchlib import peers


def prepare(out, src, backend, negative_slope=0.0, variant=None):
    return ort.prepare_relu(out, src, negative_slope, backend=backend, variant=variant)


def _numpy(out, src, negative_slope=0.0):
    if negative_slope == 0.0:
        return lambda: np.maximum(src, 0, out=out)

    def leaky():
        np.multiply(src, np.asarray(negative_slope, src.dtype), out=out)
        np.copyto(out, src, where=src > 0)
        return out
    return leaky


def _torch(out, src, negative_slope=0.0):
    import torch

    if negative_slope == 0.0:
        return lambda: torch.clamp_min(src, 0, out=out)
    return lambda: torch.ops.aten.leaky_relu.out(src, negative_slope, out=out)  # into `out`: see silu.py


PEERS = {"numpy": _numpy, "torch": _torch}


GPU_PEERS = {
    "compile": peers.compiled(lambda torch: lambda src, negative_slope=0.0: (
        torch.nn.functional.leaky_relu(src, negative_slope) if negative_slope
        else torch.relu(src))),
}
