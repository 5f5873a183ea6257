"""matmul against np.matmul(out=) (OpenBLAS) / torch.matmul(out=) (cuBLAS)."""

import numpy as np

import operator_runtime as ort


def prepare(out, a, b, backend, variant=None):
    return ort.prepare_matmul(out, a, b, backend=backend, variant=variant)


def _numpy(out, a, b):
    if a.dtype != np.float32:  # numpy has no 16-bit GEMM of its own: it would loop in Python types
        from benchlib.peers import NotAvailable

        raise NotAvailable(f"np.matmul has no BLAS kernel for {a.dtype}")
    return lambda: np.matmul(a, b, out=out)


def _torch(out, a, b):
    import torch

    return lambda: torch.matmul(a, b, out=out)


PEERS = {"numpy": _numpy, "torch": _torch}
