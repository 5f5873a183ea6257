"""The float64 reference of silu (inputs are float64 arrays)."""

import numpy as np


def silu(src):
    """x * sigmoid(x) = x / (1 + exp(-x)); silu(-inf) = -0 (the limit; PyTorch gives NaN),
    silu(+inf) = inf, NaN stays NaN. exp(-x) overflowing to inf gives -0 for large negative x."""
    with np.errstate(over="ignore", invalid="ignore"):
        out = src / (1.0 + np.exp(-src))
    return np.where(src == -np.inf, -0.0, out)
