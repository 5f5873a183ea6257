"""The float64 reference of relu (inputs are float64 arrays)."""

import numpy as np


def relu(src, negative_slope=0.0):
    # negative_slope 0 is the plain ReLU: -inf gives 0 (not 0 * -inf = NaN); NaN stays NaN.
    with np.errstate(invalid="ignore"):
        negative = src * negative_slope if negative_slope != 0.0 else np.where(
            np.isnan(src), src, 0.0)
    return np.where(src > 0, src, negative)
