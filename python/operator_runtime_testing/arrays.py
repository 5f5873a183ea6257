"""Test arrays: one interface over numpy (host) and torch (GPU), layouts, random data, poison.

A layout says how an array of a given logical shape sits in memory
(contiguous, transposed, strided, ...). Every layout is built as a view of a
larger base buffer; the gaps of the base are filled with NaN, so a kernel that
reads outside an input view, or an output element it failed to write, shows up
as NaN in the result.
"""

import math

import ml_dtypes
import numpy as np

DTYPES = ("f32", "f16", "bf16")
NUMPY_DTYPES = {"f32": np.dtype(np.float32), "f16": np.dtype(np.float16),
                "bf16": np.dtype(ml_dtypes.bfloat16)}

# Layouts of an array of logical shape S:
#   contiguous  row-major
#   transposed  dims stored in reverse order (column-major)
#   permuted    dim 0 innermost, the others row-major after it
#   strided     every other element of the last dim
#   sliced      a [1:, 1:, ...] window of a buffer one larger in every dim
#   offset      row-major, starting one element into its buffer (misaligned)
#   expanded    inputs only: even-numbered dims broadcast with stride 0
LAYOUTS = ("contiguous", "transposed", "permuted", "strided", "sliced", "offset", "expanded")
OUTPUT_LAYOUTS = tuple(x for x in LAYOUTS if x != "expanded")


def _plan(shape, layout):
    """The base buffer's shape and the view steps that give `layout`."""
    n = len(shape)
    if layout == "contiguous" or (n == 0 and layout != "offset"):
        return shape, []
    if layout in ("transposed", "permuted"):
        order = list(reversed(range(n))) if layout == "transposed" else list(range(1, n)) + [0]
        base = tuple(shape[p] for p in order)
        return base, [("permute", tuple(int(i) for i in np.argsort(order)))]
    if layout == "strided":
        return shape[:-1] + (2 * shape[-1],), [("slice", (Ellipsis, slice(None, None, 2)))]
    if layout == "sliced":
        return tuple(s + 1 for s in shape), [("slice", (slice(1, None),) * n)]
    if layout == "offset":
        return (math.prod(shape) + 1,), [("slice", (slice(1, None),)), ("reshape", shape)]
    raise ValueError(f"unknown layout {layout!r}")


def _apply(lib, base, steps):
    view = base
    for step, arg in steps:
        if step == "permute":
            view = lib.permute(view, arg)
        elif step == "slice":
            view = view[arg]
        else:
            view = view.reshape(arg)
    return view


def expanded_base_shape(shape):
    return tuple(1 if d % 2 == 0 else s for d, s in enumerate(shape))


SPECIALS = ("nan_inf", "neg_inf_slice", "neg_inf_head")


def random_values(rng, shape, special=None, dim=None):
    """float32 standard-normal values. special: "nan_inf" scatters NaN, +inf and -inf;
    "neg_inf_slice" makes the first slice along `dim` all -inf; "neg_inf_head" makes the
    first half of every slice along `dim` -inf."""
    values = np.asarray(rng.standard_normal(shape, dtype=np.float32)).reshape(shape)
    if special == "nan_inf" and values.size:
        flat = values.reshape(-1)
        count = min(flat.size, max(3, flat.size // 100))
        where = rng.choice(flat.size, size=count, replace=False)
        flat[where] = np.resize(np.array([np.nan, np.inf, -np.inf], np.float32), count)
    elif special == "neg_inf_slice" and values.size:
        index = [0] * values.ndim
        if values.ndim:
            index[dim] = slice(None)
        values[tuple(index)] = -np.inf
    elif special == "neg_inf_head" and values.size:
        index = [slice(None)] * values.ndim
        index[dim] = slice(0, values.shape[dim] // 2)
        values[tuple(index)] = -np.inf
    elif special is not None and special not in SPECIALS:
        raise ValueError(f"unknown special values {special!r}")
    return values


def make_input(rng, lib, shape, dtype, layout="contiguous", special=None, dim=None):
    """A random input of `shape` in `layout` (gaps of its buffer are NaN)."""
    shape = tuple(shape)
    if layout == "expanded":
        small = random_values(rng, expanded_base_shape(shape), special, dim)
        return lib.broadcast_to(lib.from_numpy(small, dtype), shape)
    base_shape, steps = _plan(shape, layout)
    base = lib.full_nan(base_shape, dtype)
    view = _apply(lib, base, steps)
    lib.assign(view, random_values(rng, shape, special, dim))
    return view


def make_output(lib, shape, dtype, layout="contiguous"):
    """A NaN-poisoned output of `shape` in `layout`, and a function that tells whether
    the buffer around the view is still untouched (all NaN)."""
    shape = tuple(shape)
    base_shape, steps = _plan(shape, layout)
    base = lib.full_nan(base_shape, dtype)
    mask = np.zeros(base_shape, dtype=bool)
    _apply(NUMPY, mask, steps)[...] = True

    def untouched():
        return bool(np.isnan(lib.to_f64(base)[~mask]).all())

    return _apply(lib, base, steps), untouched


class NumpyLib:
    """Host arrays; bf16 is ml_dtypes.bfloat16."""

    name = "numpy"
    array_type = np.ndarray

    def from_numpy(self, values, dtype):
        return np.array(values, dtype=NUMPY_DTYPES[dtype])

    def empty(self, shape, dtype="f32"):
        return np.empty(shape, dtype=NUMPY_DTYPES[dtype])

    def full_nan(self, shape, dtype):
        return np.full(shape, np.nan, dtype=NUMPY_DTYPES[dtype])

    def randn(self, rng, shape, dtype="f32"):
        return rng.standard_normal(shape, dtype=np.float32).astype(NUMPY_DTYPES[dtype], copy=False)

    def permute(self, a, axes):
        return a.transpose(axes)

    def broadcast_to(self, a, shape):
        return np.broadcast_to(a, shape)

    def assign(self, view, values):
        view[...] = values.astype(view.dtype)

    def to_f64(self, a):
        # ml_dtypes' 16-bit casts flag NaN as "invalid"; a NaN is a value the checks compare
        with np.errstate(invalid="ignore"):
            return np.asarray(a).astype(np.float64)

    def synchronize(self):
        pass


class TorchLib:
    """torch tensors on one device (a GPU for the GPU backends)."""

    name = "torch"

    def __init__(self, device="cuda"):
        import torch

        self.torch = torch
        self.device = torch.device(device)
        self.array_type = torch.Tensor
        self.dtypes = {"f32": torch.float32, "f16": torch.float16, "bf16": torch.bfloat16}

    def from_numpy(self, values, dtype):
        # np.array, not np.ascontiguousarray: that one turns a 0-d array into shape (1,).
        t = self.torch.from_numpy(np.array(values, dtype=np.float32))
        return t.to(device=self.device, dtype=self.dtypes[dtype])

    def empty(self, shape, dtype="f32"):
        return self.torch.empty(shape, dtype=self.dtypes[dtype], device=self.device)

    def full_nan(self, shape, dtype):
        return self.torch.full(shape, math.nan, dtype=self.dtypes[dtype], device=self.device)

    def randn(self, rng, shape, dtype="f32"):
        return self.from_numpy(rng.standard_normal(shape, dtype=np.float32), dtype)

    def permute(self, a, axes):
        return a.permute(axes)

    def broadcast_to(self, a, shape):
        return a.expand(shape)

    def assign(self, view, values):
        view.copy_(self.torch.from_numpy(np.array(values, dtype=np.float32)))

    def to_f64(self, a):
        return a.detach().to("cpu", self.torch.float64).numpy()

    def synchronize(self):
        if self.device.type == "cuda":
            self.torch.cuda.synchronize(self.device)


NUMPY = NumpyLib()
