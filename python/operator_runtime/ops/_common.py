"""What every operator function shares: the one-shot run (through the plan cache), the
checks of dim, and the multi-dim views of reduce_sum."""

import operator

from .. import _backends, _plan_cache
from .._arrays import describe_all
from .._prepared import PreparedOp, _data_pointers


def _param_key(value):
    # A float by its bits: 0.0 and -0.0 are equal keys to Python but not the same slope.
    return value.hex() if isinstance(value, float) else value


def run_once(func, op, names, arrays, params, backend, variant=None):
    """Checks the arrays (output first) and runs `op` once on them with a descriptor
    (kernel variant `variant`, None: the plan's choice) from the plan cache, made now
    when this layout is new; returns the output array (as the caller passed it)."""
    operands = describe_all(func, names, arrays, has_out=True)
    if backend in _backends.PYTHON_BACKENDS or not isinstance(backend, str):
        with PreparedOp(op, operands, params, backend, func=func, variant=variant) as prepared:
            return prepared.run()
    first = operands[0]
    key = (op, backend, variant, tuple((k, _param_key(v)) for k, v in params.items()),
           tuple(o.layout() for o in operands), first.kind.stream_key(first.device))
    prepared = _plan_cache.take(key)
    if prepared is None:
        prepared = PreparedOp(op, operands, params, backend, func=func, variant=variant)
        prepared._operands = [o.without_arrays() for o in operands]  # keeps no array alive
        prepared._ptrs = None
    try:
        result = prepared._execute(operands, _data_pointers(operands))
    except BaseException:
        prepared.destroy()
        raise
    _plan_cache.give(key, prepared)
    return result


def prepare(func, op, names, arrays, params, backend, variant=None):
    return PreparedOp(op, describe_all(func, names, arrays, has_out=True, prepared=True), params,
                      backend, func=func, variant=variant)


def describe_input(func, src, name="src"):
    (operand,) = describe_all(func, (name,), (src,), has_out=False)
    return operand


def normalize_dim(func, dim, ndim):
    """dim as a non-negative int; a 0-d src counts as shape (1,), as in the C API."""
    if isinstance(dim, bool):
        raise TypeError(f"{func}: dim must be an int, got bool")
    try:
        d = operator.index(dim)
    except TypeError:
        raise TypeError(f"{func}: dim must be an int, got {type(dim).__name__}") from None
    n = max(ndim, 1)
    if not -n <= d < n:
        raise ValueError(f"{func}: dim = {d} is out of range for a {ndim}-d src "
                         f"(valid: {-n}..{n - 1})")
    return d % n
