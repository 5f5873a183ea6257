"""The float64 reference of reduce_sum (inputs are float64 arrays)."""

import numpy as np


def reduce_sum(src, dim=None, keepdim=False):
    """dim=None (the default, as numpy and torch) sums every element; dim may be a tuple;
    a 0-d src sums to itself; inf + -inf gives NaN."""
    with np.errstate(invalid="ignore"):
        if dim is None:
            return np.full((1,) * src.ndim if keepdim else (), src.sum(dtype=np.float64))
        if src.ndim == 0:
            return src.copy()
        return src.sum(axis=dim, keepdims=keepdim, dtype=np.float64)
