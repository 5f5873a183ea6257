"""What every operator function shares: the one-shot run (through the plan cache), the
checks of dim, and the multi-dim views of reduce_sum."""

import ctypes
import operator

from .. import _backends, _fast_path, _native, _plan_cache
from .._arrays import describe, describe_all
from .._lib import MAX_DIMS
from .._prepared import PreparedOp, _data_pointers


def _param_key(value):
    # A float by its bits: 0.0 and -0.0 are equal keys to Python but not the same slope.
    return value.hex() if type(value) is float else value


def _params_key(params):
    """An op's parameters in a fast plan cache key: it has at most one (the C call's
    trailing scalar, _lib.OP_SIGNATURES)."""
    if not params:
        return None
    (value,) = params.values()
    return _param_key(value)


class _Plan(_plan_cache.Entry):
    """A plan cache entry: a PreparedOp (its descriptor and workspace; no array) and, for
    the fast path, its C execute call with every argument but the data pointers built
    once, so that a call on a layout seen before is one ctypes call (and, for a new
    output, one allocation). With the compiled module (_native), its lock `busy` is a
    Slot armed with the same call, which the module's hit path runs itself."""

    __slots__ = ("prepared", "execute", "head", "read", "stream", "fallback", "new")

    def __init__(self, prepared, arrays=None, fast=None, layout=None, new_out=False):
        super().__init__()
        self.prepared = prepared
        if fast is None:
            return
        # new: the first input -> a new output like the one of this call (relu(x)).
        self.new = fast.empty_for(arrays[1]) if new_out else None
        c, ws, size = prepared._c, prepared._workspace, prepared.workspace_size
        ws_ptr = ws and ws.ptr
        self.stream = fast.stream_of(layout)  # the CUDA stream of the key; None on the host
        # read: array -> what the C call takes for it; read_any: the same for any array of
        # the layout (numpy: also a read-only one, which exports no writable buffer).
        self.read, read_any = fast.readers_for(arrays)
        typed = (c.execute, (prepared._desc, ws_ptr, size))
        if self.read is _fast_path.buffer_view:  # ctypes objects: no conversion needed
            self.execute = c.execute_untyped
            self.head = (prepared._desc, ctypes.c_void_p(ws_ptr), ctypes.c_size_t(size))
        else:  # ints: converted by the argtypes (void *)
            self.execute, self.head = typed
        self.fallback = (*typed, read_any)
        if _native.module is not None:
            self.busy.arm(self, ctypes.cast(c.execute, ctypes.c_void_p).value, c.num_inputs,
                          prepared._desc.value, ws_ptr, size, self.stream, prepared._check)

    def close(self):
        detach = getattr(self.busy, "detach", None)  # a Slot: out of the C tables first
        if detach is not None:
            detach()
        self.prepared.destroy()


def _register(fast_call, plan, fast, arrays, backend, variant):
    """Registers `plan` with the compiled hit path under the key of this call's raw
    arguments (fast_call: (Op, the out argument as given, the raw parameter)); `arrays`:
    the output as run, then the inputs."""
    op, out, param = fast_call
    recipe = fast.recipe(arrays[0], arrays[1]) if out is None else None
    op.register(plan.busy, recipe, out, *arrays[1:], param, backend, variant)


_FAST_BACKENDS = ("auto",) + _backends.C_BACKENDS


def empty_like_input(func, src):
    """(a new contiguous array like src (its shape, dtype and device), {1: src's Operand} or
    None): for a plain numpy array or torch tensor, without describing it."""
    fast = _fast_path.kind_of(src)
    if fast is not None and fast.supported(src, MAX_DIMS):
        return fast.empty(src), None
    s = describe_input(func, src)  # says what is wrong with src, or allocates like it
    return s.kind.empty(s, s.shape), {1: s}


def run_once(func, op, names, arrays, params, backend, variant=None, known=None,
             fast_call=None):
    """Checks the arrays (output first) and runs `op` once on them with a descriptor
    (kernel variant `variant`, None: the plan's choice) from the plan cache, made now
    when this layout is new; returns the output array (as the caller passed it, or new).
    An output of None: a new contiguous array like the first input (its shape, dtype and
    device), allocated by its library. known: {index: Operand} of the inputs already
    described (describe_input).

    The fast path (plain numpy arrays and torch tensors on a C backend; _fast_path): the
    key comes from the arrays' cheap attributes (for a new output, from the inputs': they
    fix its layout), and a hit runs the cached _Plan on the arrays' data pointers, with no
    Operand made: one ctypes call. Otherwise every array is described, and the key is made
    from the Operands.

    fast_call: (the operator's _native Op or None, the out argument as the caller got it,
    the raw parameter): a plan reached through a fast key is registered with that Op, so
    that the next such call hits in C (see _native)."""
    new_out = arrays[0] is None
    fast = _fast_path.kind_of(arrays[1] if new_out else arrays[0])
    key = layout = None
    if fast is not None and backend in _FAST_BACKENDS and (variant is None
                                                          or type(variant) is str):
        layout = fast.key(arrays, new_out)
        if layout is not None:
            key = (op, backend, variant, _params_key(params), layout)
            plan = _plan_cache.acquire(key)
            if plan is not None:  # the layout was checked when the plan was cached
                try:
                    if new_out:
                        arrays = (plan.new(arrays[1]), *arrays[1:])
                    status = plan.execute(*plan.head, *map(plan.read, arrays), plan.stream)
                except TypeError:  # a read-only numpy array exports no writable buffer
                    execute, head, read_any = plan.fallback
                    status = execute(*head, *map(read_any, arrays), plan.stream)
                finally:
                    _plan_cache.release(plan)
                if status:
                    plan.prepared._check(status)
                if fast_call is not None and fast_call[0] is not None:  # a miss in C
                    _register(fast_call, plan, fast, arrays, backend, variant)
                return arrays[0]
    if new_out:  # allocated like the first input (described now unless it is plain)
        known = dict(known or ())
        src = known.get(1)
        if src is None:
            out, described = empty_like_input(func, arrays[1])
            known.update(described or ())
        else:
            out = src.kind.empty(src, src.shape)
        arrays = (out, *arrays[1:])
    python_backend = backend in _backends.PYTHON_BACKENDS or not isinstance(backend, str) \
        or not (variant is None or isinstance(variant, str))
    operands = describe_all(func, names, arrays, has_out=True, known=known)
    if python_backend:
        with PreparedOp(op, operands, params, backend, func=func, variant=variant) as prepared:
            return prepared.run()
    plan = None  # a fast key just missed (or its entry is in use by another thread)
    if key is None:
        first = operands[0]
        key = (op, backend, variant, tuple((k, _param_key(v)) for k, v in params.items()),
               tuple(o.layout() for o in operands), first.kind.stream_key(first.device))
        plan = _plan_cache.acquire(key)
    new = plan is None
    if new:
        prepared = PreparedOp(op, operands, params, backend, func=func, variant=variant,
                              keep_arrays=False)
        plan = _Plan(prepared) if layout is None else _Plan(prepared, arrays, fast, layout,
                                                            new_out)
    try:
        result = plan.prepared._execute_owned(operands, _data_pointers(operands))
    except BaseException:
        if new:
            plan.destroy()
        raise
    finally:
        if not new:
            _plan_cache.release(plan)
    if new:
        _plan_cache.add(key, plan)
        if layout is not None and fast_call is not None and fast_call[0] is not None:
            _register(fast_call, plan, fast, arrays, backend, variant)  # unless add() dropped it
    return result


def prepare(func, op, names, arrays, params, backend, variant=None):
    return PreparedOp(op, describe_all(func, names, arrays, has_out=True, prepared=True), params,
                      backend, func=func, variant=variant)


def describe_input(func, src, name="src"):
    return describe(func, name, src)


def input_ndim(func, src):
    """(src's number of dims, {1: src's Operand} or None): read from a plain numpy array or
    torch tensor, else from describing it (run_once takes the Operand as known)."""
    if _fast_path.kind_of(src) is not None:
        return len(src.shape), None
    s = describe_input(func, src)
    return s.ndim, {1: s}


def _is_bool(value):
    """Python's bool or numpy's (without importing numpy)."""
    t = type(value)
    return t is bool or (t.__module__ == "numpy" and t.__name__ in ("bool", "bool_"))


def normalize_dim(func, dim, ndim):
    """dim as a non-negative int; a 0-d src counts as shape (1,), as in the C API."""
    n = max(ndim, 1)
    if type(dim) is int and -n <= dim < n:  # the common case
        return dim % n
    if _is_bool(dim):  # bool is an int subclass, but True is no axis
        raise TypeError(f"{func}: dim must be an int, got {type(dim).__name__}")
    try:
        d = operator.index(dim)
    except TypeError:
        raise TypeError(f"{func}: dim must be an int, got {type(dim).__name__}") from None
    if not -n <= d < n:
        raise ValueError(f"{func}: dim = {d} is out of range for a {ndim}-d src "
                         f"(valid: {-n}..{n - 1})")
    return d % n
