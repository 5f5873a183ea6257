"""copy: dst = src, with src broadcast to dst's shape by numpy rules."""

from __future__ import annotations

from typing import Optional

from .. import _native
from .._prepared import PreparedOp
from .._typing import A, Array, Backend
from ._common import prepare, run_once
from ._doc import document

_NAMES = ("dst", "src")
_FAST = _native.op("copy")  # the compiled hit path, or None


def copy(src: A, *, out: Optional[A] = None, backend: Backend = "auto",
         variant: Optional[str] = None) -> A:
    result = _FAST and _FAST.call(out, src, None, backend, variant)  # hit in C
    if result is not None:
        return result
    return run_once("copy", "copy", _NAMES, (out, src), {}, backend, variant,
                    fast_call=(_FAST, out, None))


copy.__doc__ = document("copy", """\
A copy of src: a new contiguous array allocated by src's library, or out=
(src broadcast to out's shape by numpy rules); returns it. float32, float16,
bfloat16; dst and src must not overlap (unless identical).""", """\
    >>> import numpy as np, operator_runtime as ort
    >>> x = np.arange(6, dtype=np.float32).reshape(2, 3)
    >>> ort.copy(x.T).flags["C_CONTIGUOUS"]
    True""")


def copy_(dst: A, src: Array, *, backend: Backend = "auto", variant: Optional[str] = None) -> A:
    """Writes src (broadcast to dst's shape) into dst; returns dst."""
    result = _FAST and _FAST.call(dst, src, None, backend, variant)  # hit in C
    if result is not None:
        return result
    return run_once("copy_", "copy", _NAMES, (dst, src), {}, backend, variant,
                    fast_call=(_FAST, dst, None))


def prepare_copy(dst: Array, src: Array, *, backend: Backend = "auto",
                 variant: Optional[str] = None) -> PreparedOp:
    """A PreparedOp computing copy_(dst, src)."""
    return prepare("prepare_copy", "copy", _NAMES, (dst, src), {}, backend, variant)
