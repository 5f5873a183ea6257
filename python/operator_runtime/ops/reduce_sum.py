"""reduce_sum: out = the sum of src over one dim (or every element), accumulated in f32."""

from ._common import describe_input, normalize_dim, prepare, run_once

_NAMES = ("out", "src")


def reduce_sum(src, dim=-1, keepdim=False, *, backend="auto", variant=None):
    """A new array: src summed over `dim` (removed, or kept as size 1 when keepdim).

    dim=None sums every element: the result is 0-d (keepdim: src.ndim dims of
    size 1). That path reduces src.reshape(-1), which copies a src that cannot
    be viewed as 1-d.
    """
    s = describe_input("reduce_sum", src)
    if dim is None:
        out = s.kind.empty(s, (1,) * s.ndim if keepdim else ())
        run_once("reduce_sum", "reduce_sum", _NAMES, (out.reshape(()), src.reshape(-1)),
                 {"dim": 0}, backend, variant)
        return out
    d = normalize_dim("reduce_sum", dim, s.ndim)
    shape = list(s.shape)
    if shape:  # a 0-d src sums to a 0-d result either way
        if keepdim:
            shape[d] = 1
        else:
            del shape[d]
    out = s.kind.empty(s, tuple(shape))
    return run_once("reduce_sum", "reduce_sum", _NAMES, (out, src), {"dim": d}, backend, variant)


def _dim(func, dim, src):
    if dim is None:
        raise TypeError(f"{func}: dim must be an int (dim=None, the sum of every element, is "
                        f"offered by reduce_sum)")
    return {"dim": normalize_dim(func, dim, describe_input(func, src).ndim)}


def reduce_sum_(out, src, dim=-1, *, backend="auto", variant=None):
    """Writes src summed over `dim` into out, whose shape is src's with that dim removed
    or kept as size 1; returns out."""
    return run_once("reduce_sum_", "reduce_sum", _NAMES, (out, src),
                    _dim("reduce_sum_", dim, src), backend, variant)


def prepare_reduce_sum(out, src, dim=-1, *, backend="auto", variant=None):
    """A PreparedOp computing reduce_sum_(out, src, dim)."""
    return prepare("prepare_reduce_sum", "reduce_sum", _NAMES, (out, src),
                   _dim("prepare_reduce_sum", dim, src), backend, variant)
