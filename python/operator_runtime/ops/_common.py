"""What every operator function shares: the one-shot run (through the plan cache), the
checks of dim, and the multi-dim views of reduce_sum."""

import ctypes
import operator
import sys

from .. import _backends, _plan_cache
from .._arrays import describe, describe_all, numpy, numpy_dtype_code
from .._lib import MAX_DIMS
from .._prepared import PreparedOp, _data_pointers


def _param_key(value):
    # A float by its bits: 0.0 and -0.0 are equal keys to Python but not the same slope.
    return value.hex() if isinstance(value, float) else value


def _numpy_key(op, arrays, params, backend, variant):
    """The plan cache key of a call on plain numpy arrays of supported dtypes, from their
    attributes alone (cheap), or None. Such a key fixes everything describe() checks (dtype,
    shape, byte strides, writability), so a hit needs only the data pointers."""
    ndarray = _ndarray[0]
    if ndarray is None:
        np = sys.modules.get("numpy")
        if np is None:
            return None
        ndarray = _ndarray[0] = np.ndarray
    layout = []
    for a in arrays:
        if type(a) is not ndarray:
            return None
        layout += (a.dtype, a.shape, a.strides)
    return ("numpy", op, backend, variant, *[(k, _param_key(v)) for k, v in params.items()],
            arrays[0].flags.writeable, *layout)


_ndarray = [None]
_from_buffer = ctypes.c_char.from_buffer


def _numpy_pointer(a):
    """A numpy array's data pointer (None for NULL). Through the buffer protocol where it
    exports one writable and contiguous (several times cheaper than __array_interface__);
    not for bfloat16, which numpy cannot describe in a buffer."""
    flags = a.flags
    if flags.c_contiguous and flags.writeable and a.size and a.dtype.char in "fe":
        return ctypes.addressof(_from_buffer(a))
    return a.__array_interface__["data"][0] or None


def empty_like_input(func, src, shape=None):
    """(a new contiguous array like src of `shape` (default src's), {1: src's Operand} or
    None): for a plain numpy array of a supported dtype, without describing it."""
    if (type(src) is _ndarray[0] and numpy_dtype_code(src.dtype) is not None
            and src.ndim <= MAX_DIMS):  # else describe() says what is wrong with src
        return numpy().empty(src.shape if shape is None else shape, src.dtype), None
    s = describe_input(func, src)
    return s.kind.empty(s, s.shape if shape is None else shape), {1: s}


def run_once(func, op, names, arrays, params, backend, variant=None, known=None):
    """Checks the arrays (output first) and runs `op` once on them with a descriptor
    (kernel variant `variant`, None: the plan's choice) from the plan cache, made now
    when this layout is new; returns the output array (as the caller passed it).
    known: {index: Operand} of the inputs already described (describe_input)."""
    python_backend = backend in _backends.PYTHON_BACKENDS or not isinstance(backend, str) \
        or not (variant is None or isinstance(variant, str))
    key = None if python_backend else _numpy_key(op, arrays, params, backend, variant)
    if key is not None:
        prepared = _plan_cache.take(key)
        if prepared is not None:  # the fast path: the layout was checked when it was cached
            try:
                ws = prepared._workspace
                prepared._check(prepared._c.execute(
                    prepared._desc, ws and ws.ptr, prepared.workspace_size,
                    *[_numpy_pointer(a) for a in arrays], None))
            except BaseException:
                prepared.destroy()
                raise
            _plan_cache.give(key, prepared)
            return arrays[0]
    operands = describe_all(func, names, arrays, has_out=True, known=known)
    if python_backend:
        with PreparedOp(op, operands, params, backend, func=func, variant=variant) as prepared:
            return prepared.run()
    first = operands[0]
    if key is None:
        key = (op, backend, variant, tuple((k, _param_key(v)) for k, v in params.items()),
               tuple(o.layout() for o in operands), first.kind.stream_key(first.device))
    prepared = _plan_cache.take(key)
    if prepared is None:
        prepared = PreparedOp(op, operands, params, backend, func=func, variant=variant)
        prepared._operands = [o.without_arrays() for o in operands]  # keeps no array alive
        prepared._ptrs = None
    try:
        result = prepared._execute_owned(operands, _data_pointers(operands))
    except BaseException:
        prepared.destroy()
        raise
    _plan_cache.give(key, prepared)
    return result


def prepare(func, op, names, arrays, params, backend, variant=None):
    return PreparedOp(op, describe_all(func, names, arrays, has_out=True, prepared=True), params,
                      backend, func=func, variant=variant)


def describe_input(func, src, name="src"):
    return describe(func, name, src)


def _is_bool(value):
    """Python's bool or numpy's (without importing numpy)."""
    t = type(value)
    return t is bool or (t.__module__ == "numpy" and t.__name__ in ("bool", "bool_"))


def normalize_dim(func, dim, ndim):
    """dim as a non-negative int; a 0-d src counts as shape (1,), as in the C API."""
    if _is_bool(dim):  # bool is an int subclass, but True is no axis
        raise TypeError(f"{func}: dim must be an int, got {type(dim).__name__}")
    try:
        d = operator.index(dim)
    except TypeError:
        raise TypeError(f"{func}: dim must be an int, got {type(dim).__name__}") from None
    n = max(ndim, 1)
    if not -n <= d < n:
        raise ValueError(f"{func}: dim = {d} is out of range for a {ndim}-d src "
                         f"(valid: {-n}..{n - 1})")
    return d % n
