"""reduce_sum against ndarray.sum / Tensor.sum (dim=None: every element)."""

import numpy as np

import operator_runtime as ort
from benchlib import peers
from operator_runtime_testing import assertions


def prepare(out, src, backend, dim=-1, variant=None):
    if dim is None:  # as reduce_sum(src, dim=None) does it: src as 1-d, summed over dim 0
        return ort.prepare_reduce_sum(out.reshape(()), src.reshape(-1), dim=0, backend=backend,
                                      variant=variant)
    return ort.prepare_reduce_sum(out, src, dim, backend=backend, variant=variant)


def _numpy(out, src, dim=-1):
    return lambda: np.sum(src, axis=dim, out=out)  # dim None: every element, into a 0-d out


def _torch(out, src, dim=-1):
    import torch

    if dim is None:
        flat = src.reshape(-1)
        return lambda: torch.sum(flat, dim=0, out=out)
    return lambda: torch.sum(src, dim=dim, out=out)


PEERS = {"numpy": _numpy, "torch": _torch}


def tolerance64(dtype, inputs, params):
    """The tolerance of tests/cases/reduce_sum.py for float64 torch tensors (the benchmark's
    check on the device): f32 accumulation error bounded by each output's L2 norm."""
    import torch

    (src,) = inputs
    dim = params.get("dim", -1)
    squares = src * src
    if dim is None:
        axis_len, l2 = src.numel(), torch.sqrt(squares.sum())
    else:
        axis_len, l2 = src.shape[dim], torch.sqrt(squares.sum(dim=dim))
    return assertions.reduction(dtype, max(axis_len, 1), l2)


GPU_PEERS = {
    "compile": peers.compiled(lambda torch: lambda src, dim=-1: (
        torch.sum(src) if dim is None else torch.sum(src, dim))),
    "triton": peers.triton_sum_rows,
    "quack": peers.quack_none("sum reduction"),
}
