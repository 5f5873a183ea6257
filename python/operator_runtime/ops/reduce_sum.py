"""reduce_sum: out = the sum of src over some dims (by default every element), accumulated
in f32 or wider.

The C API reduces one axis. Several dims (a tuple, or dim=None: all of them) are
reduced as one axis of a view of src in which they are merged: the kept dims first, then
the reduced ones as a single dim. That view exists without a copy when the reduced dims,
taken by decreasing stride, step through memory evenly (e.g. every dim of a contiguous or
transposed array, or adjacent dims of a contiguous one). Otherwise the one-shot functions first copy src into a
contiguous temporary (with the copy operator, on the same backend), and
prepare_reduce_sum raises ValueError.
"""

from __future__ import annotations

import math
from typing import Optional, Sequence, Union

from .._arrays import describe_all
from .._prepared import PreparedOp
from .._typing import A, Array, Backend
from ._common import describe_input, normalize_dim, prepare, run_once
from ._doc import document

Dims = Optional[Union[int, Sequence[int]]]

_NAMES = ("out", "src")


def _reduced_dims(func, dim, ndim):
    """The dims to reduce, sorted, non-negative; () for a 0-d src."""
    if dim is None:
        return tuple(range(ndim))
    if isinstance(dim, (tuple, list)):
        if not dim:
            raise ValueError(f"{func}: dim = () is ambiguous (numpy reduces nothing, torch "
                             f"everything); pass dim=None to sum every element")
        dims = [normalize_dim(func, d, ndim) for d in dim]
        if len(set(dims)) != len(dims):
            raise ValueError(f"{func}: dim = {tuple(dim)} names a dim more than once")
        return tuple(sorted(dims)) if ndim else ()
    d = normalize_dim(func, dim, ndim)
    return (d,) if ndim else ()


def _merged_stride(shape, strides, dims):
    """The stride of dims merged into one (their sizes multiplied), or None when no view
    can do it. Size-1 dims are never stepped over; dims are tried by decreasing stride."""
    steps = sorted(((strides[d], shape[d]) for d in dims if shape[d] != 1), reverse=True)
    if not steps:
        return 1
    for (outer, _), (inner, inner_size) in zip(steps, steps[1:]):
        if outer != inner * inner_size:
            return None
    return steps[-1][0]


def _out_shapes(shape, dims):
    """(removed, kept as size 1): the two output shapes the C API accepts."""
    removed = tuple(n for d, n in enumerate(shape) if d not in dims)
    kept = tuple(1 if d in dims else n for d, n in enumerate(shape))
    return removed, kept


def _src_view(func, s, dims, allow_copy, backend):
    """src (Operand s) as an array of shape (kept dims..., reduced dims merged); a copy
    into a contiguous temporary when no view can be (allow_copy), else ValueError."""
    kept = [d for d in range(len(s.shape)) if d not in dims]
    shape = tuple(s.shape[d] for d in kept) + (math.prod(s.shape[d] for d in dims),)
    stride = 0 if 0 in s.shape else _merged_stride(s.shape, s.strides, dims)
    if stride is not None:
        return s.kind.as_strided(s, shape, tuple(s.strides[d] for d in kept) + (stride,))
    if not allow_copy:
        raise ValueError(
            f"{func}: src of shape {s.shape} and element strides {s.strides} cannot be viewed "
            f"with dims {dims} merged into one (the C API reduces one axis); pass a "
            f"contiguous copy, or use reduce_sum / reduce_sum_, which make one")
    order = kept + list(dims)
    permuted = s.kind.as_strided(s, tuple(s.shape[d] for d in order),
                                 tuple(s.strides[d] for d in order))
    tmp = s.kind.empty(s, permuted.shape)
    run_once(func, "copy", ("dst", "src"), (tmp, permuted), {}, backend, variant=None)
    (t,) = describe_all(func, ("src",), (tmp,), has_out=False)
    contiguous = tuple(math.prod(shape[i + 1:]) for i in range(len(shape)))
    return t.kind.as_strided(t, shape, contiguous)


def _views(func, out, src, dims, allow_copy, backend):
    """(out, src, axis) for the C call: as given for one dim, merged views for several."""
    o, s = describe_all(func, _NAMES, (out, src), has_out=True, prepared=not allow_copy)
    if len(dims) < 2:
        return out, src, dims[0] if dims else 0
    removed, kept = _out_shapes(s.shape, dims)
    if o.shape == removed:
        out_view = out
    elif o.shape == kept:
        strides = tuple(st for d, st in enumerate(o.strides) if d not in dims)
        out_view = o.kind.as_strided(o, removed, strides)
    else:
        raise ValueError(f"{func}: out has shape {o.shape}; summing src of shape {s.shape} over "
                         f"dims {dims} gives {removed} (or {kept} with keepdim)")
    return out_view, _src_view(func, s, dims, allow_copy, backend), len(removed)


def _run(func, out, src, dims, backend, variant):
    out_view, src_view, axis = _views(func, out, src, dims, True, backend)
    run_once(func, "reduce_sum", _NAMES, (out_view, src_view), {"dim": axis}, backend, variant)
    return out


def reduce_sum(src: A, dim: Dims = None, keepdim: bool = False, *, out: Optional[A] = None,
               backend: Backend = "auto", variant: Optional[str] = None) -> A:
    s = describe_input("reduce_sum", src)
    dims = _reduced_dims("reduce_sum", dim, s.ndim)
    removed, kept = _out_shapes(s.shape, dims)
    want = kept if keepdim else removed
    if out is None:
        out = s.kind.empty(s, want)
    else:
        o = describe_input("reduce_sum", out, "out")
        if o.shape != want:
            raise ValueError(f"reduce_sum: out has shape {o.shape}; summing src of shape "
                             f"{s.shape} over dims {dims} with keepdim={bool(keepdim)} gives "
                             f"{want}")
    return _run("reduce_sum", out, src, dims, backend, variant)


reduce_sum.__doc__ = document("reduce_sum", """\
The sum of src over dim, as numpy.sum and torch.sum: every element when dim is
None (the default), one dim (an int), or several (a tuple of ints); the reduced
dims are removed, or kept as size 1 when keepdim. Accumulates in f32 or wider;
the result has src's dtype (float32, float16, bfloat16); an empty sum is 0; a 0-d
src sums to itself. A new array allocated by src's library, or out= (the
result's shape); returns it.""", """\
    >>> import numpy as np, operator_runtime as ort
    >>> x = np.arange(6, dtype=np.float32).reshape(2, 3)
    >>> float(ort.reduce_sum(x)), ort.reduce_sum(x, 0), ort.reduce_sum(x, (0, 1), keepdim=True)
    (15.0, array([3., 5., 7.], dtype=float32), array([[15.]], dtype=float32))""", """\
    Several dims are summed as one axis of a view of src that merges them (e.g.
    all dims of a contiguous src); when no view can, src is first copied into a
    contiguous temporary. dim=() is refused (numpy reduces nothing, torch
    everything).""")


def reduce_sum_(out: A, src: Array, dim: Dims = None, *, backend: Backend = "auto",
                variant: Optional[str] = None) -> A:
    """Writes the sum of src over `dim` (None, the default: every element; an int; a tuple
    of ints) into out, whose shape is src's with those dims removed or kept as size 1;
    returns out."""
    s = describe_input("reduce_sum_", src)
    return _run("reduce_sum_", out, src, _reduced_dims("reduce_sum_", dim, s.ndim), backend,
                variant)


def prepare_reduce_sum(out: Array, src: Array, dim: Dims = None, *, backend: Backend = "auto",
                       variant: Optional[str] = None) -> PreparedOp:
    """A PreparedOp computing reduce_sum_(out, src, dim). Several dims (a tuple, or None)
    need src laid out so that a view merges them (e.g. contiguous): prepare never copies;
    ValueError otherwise. run_inputs takes arrays of the layout given here."""
    func = "prepare_reduce_sum"
    s = describe_input(func, src)
    dims = _reduced_dims(func, dim, s.ndim)
    out_view, src_view, axis = _views(func, out, src, dims, False, backend)
    prepared = prepare(func, "reduce_sum", _NAMES, (out_view, src_view), {"dim": axis}, backend,
                       variant)
    if len(dims) >= 2:
        prepared._returns(out)

        def adapt(arrays):
            new_out, new_src = arrays
            o_view, s_view, _ = _views(f"{func}.run_inputs", new_out, new_src, dims, False,
                                       backend)
            return (o_view, s_view), new_out

        prepared._adapt = adapt
    return prepared
