"""vector_add: out = a + b, with a and b broadcast to out's shape by numpy rules."""

from __future__ import annotations

from typing import Optional

from .. import _native
from .._arrays import describe_all, numpy
from .._prepared import PreparedOp
from .._typing import A, Array, Backend
from ._common import prepare, run_once
from ._doc import document

_NAMES = ("out", "a", "b")
_FAST = _native.op("vector_add")  # the compiled hit path, or None


def vector_add(a: A, b: Array, *, out: Optional[A] = None, backend: Backend = "auto",
               variant: Optional[str] = None) -> A:
    result = _FAST and _FAST.call(out, a, b, None, backend, variant)  # hit in C
    if result is not None:
        return result
    given, known = out, None
    if out is None:
        first, second = describe_all("vector_add", ("a", "b"), (a, b), has_out=False)
        known = {1: first, 2: second}
        try:
            shape = numpy().broadcast_shapes(first.shape, second.shape)
        except ValueError:
            raise ValueError(f"vector_add: a of shape {first.shape} and b of shape "
                             f"{second.shape} do not broadcast") from None
        out = first.kind.empty(first, shape)
    return run_once("vector_add", "vector_add", _NAMES, (out, a, b), {}, backend, variant,
                    known=known, fast_call=(_FAST, given, None))


vector_add.__doc__ = document("vector_add", """\
a + b elementwise, a and b broadcast by numpy rules, computed in f32: a new
array of the broadcast shape allocated by a's library, or out= (a and b
broadcast to out's shape; out may be a or b itself); returns it. float32,
float16, bfloat16.""", """\
    >>> import numpy as np, operator_runtime as ort
    >>> ort.vector_add(np.ones((2, 3), np.float32), np.arange(3, dtype=np.float32))
    array([[1., 2., 3.],
           [1., 2., 3.]], dtype=float32)""")


def vector_add_(out: A, a: Array, b: Array, *, backend: Backend = "auto",
                variant: Optional[str] = None) -> A:
    """Writes a + b into out (out may be a or b itself); returns out."""
    result = _FAST and _FAST.call(out, a, b, None, backend, variant)  # hit in C
    if result is not None:
        return result
    return run_once("vector_add_", "vector_add", _NAMES, (out, a, b), {}, backend, variant,
                    fast_call=(_FAST, out, None))


def prepare_vector_add(out: Array, a: Array, b: Array, *, backend: Backend = "auto",
                       variant: Optional[str] = None) -> PreparedOp:
    """A PreparedOp computing vector_add_(out, a, b)."""
    return prepare("prepare_vector_add", "vector_add", _NAMES, (out, a, b), {}, backend, variant)
