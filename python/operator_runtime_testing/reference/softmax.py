"""The float64 reference of softmax (inputs are float64 arrays)."""

import numpy as np


def softmax(src, dim=-1):
    """Max-subtracted; NaN propagates and an all -inf slice gives NaN, as in PyTorch."""
    if src.ndim == 0:
        return softmax(src.reshape(1), 0).reshape(())
    if src.size == 0:
        return src.copy()
    with np.errstate(invalid="ignore", over="ignore"):
        shifted = src - src.max(axis=dim, keepdims=True)
        e = np.exp(shifted)
        return e / e.sum(axis=dim, keepdims=True)
