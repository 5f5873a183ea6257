"""matmul against np.matmul(out=) (OpenBLAS) / torch.matmul(out=) (cuBLAS)."""

import math

import numpy as np

import operator_runtime as ort
from operator_runtime_testing import assertions


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


def tolerance64(dtype, inputs, params):
    """The tolerance of tests/cases/matmul.py for float64 torch tensors (the benchmark's check
    on the device, where numpy cannot read the inputs): the dtype's own rounding plus the f32
    accumulation, 4 eps_f32 sqrt(K) |a| @ |b| per element."""
    import torch

    a, b = inputs
    rtol, atol = assertions.TOLERANCES[dtype]
    scale = torch.nan_to_num(a.abs() @ b.abs(), nan=0.0, posinf=0.0)
    return rtol, atol + 4.0 * assertions.EPS_F32 * math.sqrt(max(a.shape[1], 1)) * scale
