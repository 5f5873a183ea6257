"""relu: out = src > 0 ? src : negative_slope * src (negative_slope 0 is the plain ReLU)."""

import math
import numbers

import numpy as np

from ._common import describe_input, prepare, run_once

_NAMES = ("out", "src")


def _params(func, negative_slope):
    if not isinstance(negative_slope, numbers.Real) or isinstance(negative_slope, (bool, np.bool_)):
        raise TypeError(f"{func}: negative_slope must be a real number, got "
                        f"{type(negative_slope).__name__}")
    slope = float(negative_slope)
    # The C API takes a finite f32: a value that is not finite, or that overflows
    # f32 (1e300 would become inf), is refused rather than changed.
    with np.errstate(over="ignore"):
        as_f32 = float(np.float32(slope))
    if not math.isfinite(slope) or not math.isfinite(as_f32):
        raise ValueError(f"{func}: negative_slope = {negative_slope!r} is not a finite float32 "
                         f"(|slope| <= {float(np.finfo(np.float32).max):.6g})")
    return {"negative_slope": slope}


def relu(src, negative_slope=0.0, *, backend="auto", variant=None):
    """A new array relu(src), allocated by src's library."""
    params = _params("relu", negative_slope)
    s = describe_input("relu", src)
    return run_once("relu", "relu", _NAMES, (s.kind.empty(s, s.shape), src), params, backend, variant)


def relu_(out, src, negative_slope=0.0, *, backend="auto", variant=None):
    """Writes relu(src) into out (out may be src itself); returns out."""
    return run_once("relu_", "relu", _NAMES, (out, src), _params("relu_", negative_slope),
                    backend, variant)


def prepare_relu(out, src, negative_slope=0.0, *, backend="auto", variant=None):
    """A PreparedOp computing relu_(out, src, negative_slope)."""
    return prepare("prepare_relu", "relu", _NAMES, (out, src),
                   _params("prepare_relu", negative_slope), backend, variant)
