"""vector_add: out = a + b, with a and b broadcast to out's shape by numpy rules."""

import numpy as np

from .._arrays import describe_all
from ._common import prepare, run_once

_NAMES = ("out", "a", "b")


def vector_add(a, b, *, backend="auto", variant=None):
    """A new array a + b of the broadcast shape, allocated by a's library."""
    first, second = describe_all("vector_add", ("a", "b"), (a, b), has_out=False)
    try:
        shape = np.broadcast_shapes(first.shape, second.shape)
    except ValueError:
        raise ValueError(f"vector_add: a of shape {first.shape} and b of shape {second.shape} "
                         f"do not broadcast") from None
    out = first.kind.empty(first, shape)
    return run_once("vector_add", "vector_add", _NAMES, (out, a, b), {}, backend, variant)


def vector_add_(out, a, b, *, backend="auto", variant=None):
    """Writes a + b into out (out may be a or b itself); returns out."""
    return run_once("vector_add_", "vector_add", _NAMES, (out, a, b), {}, backend, variant)


def prepare_vector_add(out, a, b, *, backend="auto", variant=None):
    """A PreparedOp computing vector_add_(out, a, b)."""
    return prepare("prepare_vector_add", "vector_add", _NAMES, (out, a, b), {}, backend, variant)
