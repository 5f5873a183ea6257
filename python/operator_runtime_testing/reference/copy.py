"""The float64 reference of copy (inputs are float64 arrays)."""

import numpy as np


def copy(src, out_shape=None):
    """src broadcast to out_shape (copy_ broadcasts src to dst)."""
    return np.array(np.broadcast_to(src, src.shape if out_shape is None else out_shape))
