"""float64 numpy references of every operator (inputs are float64 arrays)."""

import numpy as np


def copy(src, out_shape=None):
    """src broadcast to out_shape (copy_ broadcasts src to dst)."""
    return np.array(np.broadcast_to(src, src.shape if out_shape is None else out_shape))


def vector_add(a, b):
    with np.errstate(invalid="ignore"):  # inf + -inf is NaN, as expected
        return a + b


def relu(src, negative_slope=0.0):
    # negative_slope 0 is the plain ReLU: -inf gives 0 (not 0 * -inf = NaN); NaN stays NaN.
    with np.errstate(invalid="ignore"):
        negative = src * negative_slope if negative_slope != 0.0 else np.where(
            np.isnan(src), src, 0.0)
    return np.where(src > 0, src, negative)


def reduce_sum(src, dim=None, keepdim=False):
    """dim=None (the default, as numpy and torch) sums every element; dim may be a tuple;
    a 0-d src sums to itself; inf + -inf gives NaN."""
    with np.errstate(invalid="ignore"):
        if dim is None:
            return np.full((1,) * src.ndim if keepdim else (), src.sum(dtype=np.float64))
        if src.ndim == 0:
            return src.copy()
        return src.sum(axis=dim, keepdims=keepdim, dtype=np.float64)


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


def silu(src):
    """x * sigmoid(x) = x / (1 + exp(-x)); silu(-inf) = -0 (the limit; PyTorch gives NaN),
    silu(+inf) = inf, NaN stays NaN. exp(-x) overflowing to inf gives -0 for large negative x."""
    with np.errstate(over="ignore", invalid="ignore"):
        out = src / (1.0 + np.exp(-src))
    return np.where(src == -np.inf, -0.0, out)


# camp new-op: references (scripts/camp_tools/new_op.py adds operators above this line)
