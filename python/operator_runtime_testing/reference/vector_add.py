"""The float64 reference of vector_add (inputs are float64 arrays)."""

import numpy as np


def vector_add(a, b):
    with np.errstate(invalid="ignore"):  # inf + -inf is NaN, as expected
        return a + b
