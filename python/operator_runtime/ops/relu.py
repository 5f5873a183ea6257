"""relu: out = src > 0 ? src : negative_slope * src (negative_slope 0 is the plain ReLU)."""

from __future__ import annotations

import math
import numbers
import struct
from typing import Optional

from .. import _native
from .._prepared import PreparedOp
from .._typing import A, Array, Backend
from ._common import _is_bool, prepare, run_once
from ._doc import document

_NAMES = ("out", "src")
_FAST = _native.op("relu")  # the compiled hit path, or None


_F32_MAX = 3.4028234663852886e38


def _params(func, negative_slope):
    if type(negative_slope) is float and -_F32_MAX <= negative_slope <= _F32_MAX:
        return {"negative_slope": negative_slope}  # the common case (NaN fails the range)
    if not isinstance(negative_slope, numbers.Real) or _is_bool(negative_slope):
        raise TypeError(f"{func}: negative_slope must be a real number, got "
                        f"{type(negative_slope).__name__}")
    slope = float(negative_slope)
    # The C API takes a finite f32: a value that is not finite, or that overflows
    # f32 (1e300 would become inf), is refused rather than changed.
    try:
        fits = math.isfinite(slope) and math.isfinite(struct.unpack("f", struct.pack("f", slope))[0])
    except OverflowError:
        fits = False
    if not fits:
        raise ValueError(f"{func}: negative_slope = {negative_slope!r} is not a finite float32 "
                         f"(|slope| <= {_F32_MAX:.6g})")
    return {"negative_slope": slope}


def relu(src: A, negative_slope: float = 0.0, *, out: Optional[A] = None,
         backend: Backend = "auto", variant: Optional[str] = None) -> A:
    result = _FAST and _FAST.call(out, src, negative_slope, backend, variant)  # hit in C
    if result is not None:
        return result
    return run_once("relu", "relu", _NAMES, (out, src), _params("relu", negative_slope), backend,
                    variant, fast_call=(_FAST, out, negative_slope))


relu.__doc__ = document("relu", """\
relu(src) elementwise: src where src > 0, else negative_slope * src (0, the
default, is the plain ReLU; NaN stays NaN): a new array allocated by src's
library, or out= (src broadcast to out's shape; out may be src itself);
returns it. float32, float16, bfloat16.""", """\
    >>> import numpy as np, operator_runtime as ort
    >>> ort.relu(np.array([-2.0, 3.0], dtype=np.float32), 0.5)
    array([-1.,  3.], dtype=float32)""")


def relu_(out: A, src: Array, negative_slope: float = 0.0, *, backend: Backend = "auto",
          variant: Optional[str] = None) -> A:
    """Writes relu(src, negative_slope) into out (out may be src itself); returns out."""
    result = _FAST and _FAST.call(out, src, negative_slope, backend, variant)  # hit in C
    if result is not None:
        return result
    return run_once("relu_", "relu", _NAMES, (out, src), _params("relu_", negative_slope),
                    backend, variant, fast_call=(_FAST, out, negative_slope))


def prepare_relu(out: Array, src: Array, negative_slope: float = 0.0, *,
                 backend: Backend = "auto", variant: Optional[str] = None) -> PreparedOp:
    """A PreparedOp computing relu_(out, src, negative_slope)."""
    return prepare("prepare_relu", "relu", _NAMES, (out, src),
                   _params("prepare_relu", negative_slope), backend, variant)
