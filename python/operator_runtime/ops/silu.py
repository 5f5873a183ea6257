"""silu: out = silu(src), elementwise (src broadcasts to out by numpy rules)."""

from __future__ import annotations

from typing import Optional

from .. import _native
from .._prepared import PreparedOp
from .._typing import A, Array, Backend
from ._common import prepare, run_once
from ._doc import document

_NAMES = ("out", "src")
_FAST = _native.op("silu")  # the compiled hit path, or None


def silu(src: A, *, out: Optional[A] = None, backend: Backend = "auto",
         variant: Optional[str] = None) -> A:
    result = _FAST and _FAST.call(out, src, None, backend, variant)  # hit in C
    if result is not None:
        return result
    return run_once("silu", "silu", _NAMES, (out, src), {}, backend, variant,
                    fast_call=(_FAST, out, None))


silu.__doc__ = document("silu", """\
silu(src) = src * sigmoid(src), elementwise, computed in f32: a new array
allocated by src's library, or out= (src broadcast to out's shape; out may be
src itself); returns it. float32, float16, bfloat16.""", """\
    >>> import numpy as np, operator_runtime as ort
    >>> ort.silu(np.array([-1.0, 0.0, 2.0], dtype=np.float32)).round(4)
    array([-0.2689,  0.    ,  1.7616], dtype=float32)""")


def silu_(out: A, src: Array, *, backend: Backend = "auto", variant: Optional[str] = None) -> A:
    """Writes silu(src) into out (out may be src itself); returns out."""
    result = _FAST and _FAST.call(out, src, None, backend, variant)  # hit in C
    if result is not None:
        return result
    return run_once("silu_", "silu", _NAMES, (out, src), {}, backend, variant,
                    fast_call=(_FAST, out, None))


def prepare_silu(out: Array, src: Array, *, backend: Backend = "auto",
                 variant: Optional[str] = None) -> PreparedOp:
    """A PreparedOp computing silu_(out, src)."""
    return prepare("prepare_silu", "silu", _NAMES, (out, src), {}, backend, variant)
