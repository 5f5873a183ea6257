"""vector_add against np.add(out=) / torch.add(out=)."""

import numpy as np

import operator_runtime as ort
from benchlib import peers


def prepare(out, a, b, backend, variant=None):
    return ort.prepare_vector_add(out, a, b, backend=backend, variant=variant)


def _numpy(out, a, b):
    return lambda: np.add(a, b, out=out)


def _torch(out, a, b):
    import torch

    return lambda: torch.add(a, b, out=out)


PEERS = {"numpy": _numpy, "torch": _torch}


GPU_PEERS = {"compile": peers.compiled(lambda torch: lambda a, b: a + b)}
