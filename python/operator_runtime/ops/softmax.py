"""softmax: out = exp(src - max) / sum(exp(src - max)) along dim; a slice of all -inf gives NaN."""

from __future__ import annotations

from typing import Optional

from .. import _native
from .._prepared import PreparedOp
from .._typing import A, Array, Backend
from ._common import describe_input, input_ndim, normalize_dim, prepare, run_once
from ._doc import document

_NAMES = ("out", "src")
_FAST = _native.op("softmax")  # the compiled hit path, or None


def softmax(src: A, dim: int = -1, *, out: Optional[A] = None, backend: Backend = "auto",
            variant: Optional[str] = None) -> A:
    result = _FAST and _FAST.call(out, src, dim, backend, variant)  # hit in C
    if result is not None:
        return result
    ndim, known = input_ndim("softmax", src)
    params = {"dim": normalize_dim("softmax", dim, ndim)}
    return run_once("softmax", "softmax", _NAMES, (out, src), params, backend, variant,
                    known=known, fast_call=(_FAST, out, dim))


softmax.__doc__ = document("softmax", """\
softmax(src) along dim (an int, default the last): exp(src - max) / sum(exp(src
- max)), computed in f32; NaN propagates and a slice of all -inf gives NaN (as
in PyTorch). A new array allocated by src's library, or out= (src's shape; must
not overlap src); returns it. float32, float16, bfloat16.""", """\
    >>> import numpy as np, operator_runtime as ort
    >>> ort.softmax(np.zeros((2, 4), dtype=np.float32), dim=1)
    array([[0.25, 0.25, 0.25, 0.25],
           [0.25, 0.25, 0.25, 0.25]], dtype=float32)""")


def softmax_(out: A, src: Array, dim: int = -1, *, backend: Backend = "auto",
             variant: Optional[str] = None) -> A:
    """Writes softmax(src, dim) into out (out must not overlap src); returns out."""
    result = _FAST and _FAST.call(out, src, dim, backend, variant)  # hit in C
    if result is not None:
        return result
    ndim, known = input_ndim("softmax_", src)
    params = {"dim": normalize_dim("softmax_", dim, ndim)}
    return run_once("softmax_", "softmax", _NAMES, (out, src), params, backend, variant,
                    known=known, fast_call=(_FAST, out, dim))


def prepare_softmax(out: Array, src: Array, dim: int = -1, *, backend: Backend = "auto",
                    variant: Optional[str] = None) -> PreparedOp:
    """A PreparedOp computing softmax_(out, src, dim)."""
    params = {"dim": normalize_dim("prepare_softmax", dim,
                                   describe_input("prepare_softmax", src).ndim)}
    return prepare("prepare_softmax", "softmax", _NAMES, (out, src), params, backend, variant)
