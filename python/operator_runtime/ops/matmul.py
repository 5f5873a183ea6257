"""matmul: out = a @ b for 2-D a (M, K) and b (K, N), products summed in f32."""

from __future__ import annotations

from typing import Optional

from .. import _native
from .._arrays import describe_all
from .._prepared import PreparedOp
from .._typing import A, Array, Backend
from ._common import prepare, run_once
from ._doc import document

_NAMES = ("out", "a", "b")
_FAST = _native.op("matmul")  # the compiled hit path, or None


def _result_shape(func, a, b):
    """(M, N) of a @ b, or ValueError naming what does not fit."""
    for name, x in (("a", a), ("b", b)):
        if len(x.shape) != 2:
            raise ValueError(f"{func}: {name} has shape {x.shape} ({len(x.shape)} dims); matmul takes "
                             f"2-D a (M, K) and b (K, N)")
    if a.shape[1] != b.shape[0]:
        raise ValueError(f"{func}: a of shape {a.shape} and b of shape {b.shape} do not multiply: "
                         f"a's dim 1 (K = {a.shape[1]}) must equal b's dim 0 ({b.shape[0]})")
    return (a.shape[0], b.shape[1])


def matmul(a: A, b: Array, *, out: Optional[A] = None, backend: Backend = "auto",
           variant: Optional[str] = None) -> A:
    result = _FAST and _FAST.call(out, a, b, None, backend, variant)  # hit in C
    if result is not None:
        return result
    given, known = out, None
    if out is None:
        first, second = describe_all("matmul", ("a", "b"), (a, b), has_out=False)
        known = {1: first, 2: second}
        out = first.kind.empty(first, _result_shape("matmul", first, second))
    return run_once("matmul", "matmul", _NAMES, (out, a, b), {}, backend, variant, known=known,
                    fast_call=(_FAST, given, None))


matmul.__doc__ = document("matmul", """\
a @ b for 2-D a (M, K) and b (K, N): out[i, j] = sum over p of a[i, p] * b[p, j],
the products summed in f32 and rounded once to the dtype (K = 0 gives zeros). Any
strides (transposed, sliced; an input may broadcast with stride 0); no batch dims.
A new (M, N) array allocated by a's library, or out= (shape (M, N); must not
overlap a or b); returns it. float32, float16, bfloat16.""", """\
    >>> import numpy as np, operator_runtime as ort
    >>> ort.matmul(np.ones((2, 3), np.float32), np.arange(6, dtype=np.float32).reshape(3, 2))
    array([[6., 9.],
           [6., 9.]], dtype=float32)""")


def matmul_(out: A, a: Array, b: Array, *, backend: Backend = "auto",
            variant: Optional[str] = None) -> A:
    """Writes a @ b into out (shape (M, N); must not overlap a or b); returns out."""
    result = _FAST and _FAST.call(out, a, b, None, backend, variant)  # hit in C
    if result is not None:
        return result
    return run_once("matmul_", "matmul", _NAMES, (out, a, b), {}, backend, variant,
                    fast_call=(_FAST, out, None))


def prepare_matmul(out: Array, a: Array, b: Array, *, backend: Backend = "auto",
                   variant: Optional[str] = None) -> PreparedOp:
    """A PreparedOp computing matmul_(out, a, b)."""
    return prepare("prepare_matmul", "matmul", _NAMES, (out, a, b), {}, backend, variant)
