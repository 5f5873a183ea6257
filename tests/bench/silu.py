"""silu against numpy (CPU) and torch (GPU)."""

import numpy as np

import operator_runtime as ort


def prepare(out, src, backend):
    return ort.prepare_silu(out, src, backend=backend)


def _numpy(out, src):
    return lambda: np.copyto(out, src) or out  # the placeholder math (identity)


def _torch(out, src):
    return lambda: out.copy_(src)  # the placeholder math (identity)


PEERS = {"numpy": _numpy, "torch": _torch}
