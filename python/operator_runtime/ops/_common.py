"""What every operator function shares: the one-shot run and dim checks."""

import operator

import numpy as np

from .._arrays import describe_all
from .._prepared import PreparedOp


def run_once(func, op, names, arrays, params, backend, variant=None):
    """Checks the arrays (output first), creates the descriptor (with the kernel
    variant `variant`, None: the plan's choice), runs it once and frees it;
    returns the output array."""
    ops = describe_all(func, names, arrays, has_out=True)
    with PreparedOp(op, ops, params, backend, func=func, variant=variant) as prepared:
        return prepared.run()


def prepare(func, op, names, arrays, params, backend, variant=None):
    return PreparedOp(op, describe_all(func, names, arrays, has_out=True), params, backend,
                      func=func, variant=variant)


def describe_input(func, src, name="src"):
    (operand,) = describe_all(func, (name,), (src,), has_out=False)
    return operand


def normalize_dim(func, dim, ndim):
    """dim as a non-negative int; a 0-d src counts as shape (1,), as in the C API."""
    if isinstance(dim, (bool, np.bool_)):  # an int subclass, but True is no axis
        raise TypeError(f"{func}: dim must be an int, got {type(dim).__name__}")
    try:
        d = operator.index(dim)
    except TypeError:
        raise TypeError(f"{func}: dim must be an int, got {type(dim).__name__}") from None
    n = max(ndim, 1)
    if not -n <= d < n:
        raise ValueError(f"{func}: dim = {d} is out of range for a {ndim}-d src "
                         f"(valid: {-n}..{n - 1})")
    return d % n
