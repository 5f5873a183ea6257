"""softmax against a numpy softmax (max, subtract, exp, sum, divide, into `out`) and
torch's softmax (the out= form of aten::_softmax, writing into `out` like ours: see silu.py)."""

import numpy as np

import operator_runtime as ort
from benchlib import peers


def prepare(out, src, backend, dim=-1, variant=None):
    return ort.prepare_softmax(out, src, dim, backend=backend, variant=variant)


def _numpy(out, src, dim=-1):
    def run():
        np.subtract(src, src.max(axis=dim, keepdims=True), out=out)
        np.exp(out, out=out)
        return np.divide(out, out.sum(axis=dim, keepdims=True), out=out)
    return run


def _torch(out, src, dim=-1):
    import torch

    return lambda: torch.ops.aten._softmax.out(src, dim, False, out=out)


PEERS = {"numpy": _numpy, "torch": _torch}


GPU_PEERS = {
    "compile": peers.compiled(lambda torch: lambda src, dim=-1: torch.softmax(src, dim)),
    "triton": peers.triton_softmax,
    "quack": peers.quack_softmax,
}
