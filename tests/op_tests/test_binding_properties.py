"""Seeded random property test of the Python binding on the CPU: random shapes,
dtypes, slices, transposes, broadcasts, shared buffers and arguments for every
operator. Properties: no crash; an accepted call matches numpy; a call is
refused exactly when its output shares an element with an input (other than
exact in place for the elementwise ops) or its arguments are invalid, and then
with a ValueError / TypeError and the output untouched."""

import ml_dtypes
import numpy as np
import pytest

import operator_runtime as ort

DTYPES = {"f32": (np.float32, 1e-5), "f16": (np.float16, 2e-3), "bf16": (ml_dtypes.bfloat16, 1.6e-2)}
ELEMENTWISE = ("copy", "vector_add", "relu", "silu")


def _random_view(rng, base, ndim):
    """A random strided view (slices with steps, maybe transposed) of `base`."""
    view = base
    for d in range(view.ndim):
        n = view.shape[d]
        start = int(rng.integers(0, max(n, 1)))
        step = int(rng.integers(1, 3))
        stop = int(rng.integers(start, n + 1))
        index = [slice(None)] * view.ndim
        index[d] = slice(start, stop, step)
        view = view[tuple(index)]
    if ndim > 1 and rng.random() < 0.3:
        view = view.transpose(rng.permutation(view.ndim))
    return view


def _reference(op, args, dim, slope):
    f = [np.asarray(a, dtype=np.float64) for a in args]
    if op == "copy":
        return f[0]
    if op == "vector_add":
        return f[0] + f[1]
    if op == "relu":
        return np.where(f[0] > 0, f[0], slope * f[0])
    if op == "silu":
        return f[0] / (1 + np.exp(-f[0]))
    if op == "reduce_sum":
        return f[0].sum(axis=dim)
    e = np.exp(f[0] - f[0].max(axis=dim, keepdims=True))
    return e / e.sum(axis=dim, keepdims=True)


def _shares(out, ins):
    return any(np.shares_memory(out, a) for a in ins)


def _exact_in_place(out, a):
    ai, oi = a.__array_interface__, out.__array_interface__
    return (ai["data"][0] == oi["data"][0] and a.shape == out.shape
            and all(s == 1 or x == y for s, x, y in zip(a.shape, a.strides, out.strides)))


def _one_case(rng):
    op = str(rng.choice(["copy", "vector_add", "relu", "silu", "reduce_sum", "softmax"]))
    dtype, tol = DTYPES[str(rng.choice(list(DTYPES)))]
    ndim = int(rng.integers(1, 4))
    buf = rng.standard_normal(int(rng.integers(1, 200))).astype(dtype)
    shape = tuple(int(s) for s in rng.integers(1, 6, size=ndim))
    size = int(np.prod(shape))
    if buf.size < 2 * size:
        buf = np.resize(buf, 2 * size + 8)
    base = buf[:size].reshape(shape)
    src = _random_view(rng, base, ndim)
    if src.size == 0:
        return "empty"
    dim = int(rng.integers(-src.ndim, src.ndim))
    slope = float(rng.choice([0.0, 0.1, -2.0]))
    ins = [src]
    if op == "vector_add":
        other = _random_view(rng, base, ndim)
        ins.append(other if other.shape == src.shape and rng.random() < 0.7
                   else np.broadcast_to(buf[int(rng.integers(0, buf.size)):][:1], src.shape))
    out_shape = tuple(s for d, s in enumerate(src.shape) if d != dim % src.ndim) if op == "reduce_sum" \
        else src.shape
    # The output: fresh, or a view of the same buffer (in place, interleaved, or overlapping).
    r = rng.random()
    if r < 0.4 or int(np.prod(out_shape)) == 0:
        out = np.zeros(out_shape, dtype=dtype)
    elif r < 0.6 and op in ELEMENTWISE:
        out = src if src.flags.writeable else np.zeros(out_shape, dtype=dtype)
    else:
        flat = buf[int(rng.integers(0, 3)):]
        step = int(rng.integers(1, 3))
        need = int(np.prod(out_shape)) * step
        if flat.size < need:
            out = np.zeros(out_shape, dtype=dtype)
        else:
            out = flat[:need:step].reshape(out_shape)
    before_ins = [np.array(a, dtype=np.float64) for a in ins]
    before_out = out.copy()
    refused = _shares(out, ins) and not (op in ELEMENTWISE and all(
        not np.shares_memory(out, a) or _exact_in_place(out, a) for a in ins))
    kwargs = {"backend": "cpu"}
    call = getattr(ort, op + "_")
    args = (out, *ins)
    if op in ("reduce_sum", "softmax"):
        kwargs["dim"] = dim
    if op == "relu":
        args = (*args, slope)
    try:
        call(*args, **kwargs)
    except (ValueError, TypeError) as e:
        assert refused, f"{op} refused a valid call: {e}"
        assert np.array_equal(out, before_out, equal_nan=True), "a refused call wrote its output"
        return "refused"
    assert not refused, f"{op} accepted out sharing an element with an input"
    want = _reference(op, before_ins, dim, slope)
    np.testing.assert_allclose(np.asarray(out, dtype=np.float64), want, rtol=tol,
                               atol=tol * (src.shape[dim] if op == "reduce_sum" else 1))
    return "shared buffer, run" if _shares(out, ins) or any(
        np.shares_memory(np.asarray(out), a) for a in ins) else "run"


@pytest.mark.parametrize("seed", range(8))
def test_binding_properties(seed):
    rng = np.random.default_rng(1000 + seed)
    outcomes = [_one_case(rng) for _ in range(150)]
    # Every kind of outcome occurs: the property is exercised both ways.
    for kind in ("run", "refused", "shared buffer, run"):
        assert outcomes.count(kind) >= 3, (kind, {k: outcomes.count(k) for k in set(outcomes)})
