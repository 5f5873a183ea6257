"""Edge data on every backend: empty tensors, single elements, every size 1..67 and
2^k - 1, 2^k, 2^k + 1 up to 2^16 + 1 (both sides of every vector width and block size),
data pointers one element off alignment, rows of 2^20 + 1 elements, NaN and +-inf in
every position of a softmax row, denormals, and f16/bf16 values at their range limits.

Each case runs through every form of the operator (op, op_ into a NaN-poisoned output,
prepare + run + run_inputs) with run_case, or compares one call with the float64
reference of operator_runtime_testing.reference. Runs with --backend cpu and, on a GPU
machine, --backend nvidia (torch arrays).
"""

import math

import ml_dtypes
import numpy as np
import pytest

import cases as case_modules
import operator_runtime as ort
from operator_runtime import _manifest
from operator_runtime_testing import DTYPES, assertions, reference, run_case
from operator_runtime_testing.cases import Operand, case

# Every operator of tests/cases; the one-axis ops are those taking a dim.
OPS = {op: case_modules.load(op).OP for op in case_modules.OPS}
AXIS_OPS = tuple(op for op, info in OPS.items() if "dim" in info.inplace_params)
# a (M, K) @ b (K, N): the shapes below become products whose M, K or N is that size.
MATMUL_OPS = tuple(op for op in OPS if _manifest.op(op).kind == "matmul")

# 1..67, then both sides of every power of two up to 2^16.
SIZES = tuple(range(1, 68)) + tuple(2**k + d for k in range(7, 17) for d in (-1, 0, 1))
# Misaligned runs: around the vector widths (4 f32, 8 f16/bf16 per 16 bytes) and blocks.
MISALIGNED_SIZES = tuple(range(1, 21)) + (31, 32, 33, 63, 64, 65, 127, 129, 1023, 1025, 4095,
                                          4097, 65535, 65537)
HUGE_ROW = 2**20 + 1


def _check(op_name, cases, dtype, target, seed):
    """run_case on each case; one failure message per failing case."""
    failures = []
    for k, c in enumerate(cases):
        result = run_case(OPS[op_name], c, dtype, target.lib, target.backend, seed + k)
        if not result.ok:
            failures.append(f"{c.name}: {result.message}")
    assert not failures, f"{len(failures)} of {len(cases)} cases fail (seed {seed}):\n" + \
        "\n".join(failures[:10])


def _inputs(op_name, *shapes_or_operands):
    """The input operands of `op_name` for one logical shape (two for vector_add)."""
    return shapes_or_operands * (2 if op_name == "vector_add" else 1)


def _matmul_cases(tag, n, layout="contiguous", out_layout="contiguous"):
    """Products with one side of size n: K = n (rows of a, columns of b), then M = n."""
    return [case(f"{tag}_2x{n}x3", Operand((2, n), layout), Operand((n, 3), layout),
                 out_layout=out_layout),
            case(f"{tag}_{n}x3x2", Operand((n, 3), layout), Operand((3, 2), layout),
                 out_layout=out_layout)]


def _params(op_name, dim):
    if op_name in AXIS_OPS:
        return {"dim": dim}
    return {"negative_slope": 0.5} if op_name == "relu" else {}


# --- shapes -----------------------------------------------------------------------------


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("op_name", list(OPS))
def test_empty_tensors(op_name, dtype, target, seed):
    """Also empty tensors with a long axis: a backend may plan long rows as split rows
    (sized by the row count, 0 here)."""
    shapes = [(0,), (0, 5), (5, 0), (2, 0, 3), (0, 0), (0, HUGE_ROW), (HUGE_ROW, 0)]
    if op_name in MATMUL_OPS:  # M, K or N of 0 (K = 0: zeros)
        mnk = [(0, 5, 3), (5, 0, 3), (3, 5, 0), (0, 0, 0), (0, HUGE_ROW, 0), (3, 0, 1025)]
        _check(op_name, [case(f"empty_{m}x{k}x{n}", (m, k), (k, n)) for m, k, n in mnk], dtype,
               target, seed)
        return
    cases = []
    for s in shapes:
        dims = range(-len(s), len(s)) if op_name in AXIS_OPS else [None]
        for d in dims:
            cases.append(case(f"empty_{s}_dim{d}", *_inputs(op_name, s), params=_params(op_name, d)))
    _check(op_name, cases, dtype, target, seed)


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("op_name", list(OPS))
def test_single_elements(op_name, dtype, target, seed):
    shapes = [(), (1,), (1, 1), (1, 1, 1)]
    if op_name in MATMUL_OPS:
        _check(op_name, [case("single_1x1x1", (1, 1), (1, 1))], dtype, target, seed)
        return
    cases = []
    for s in shapes:
        dims = range(-max(len(s), 1), max(len(s), 1)) if op_name in AXIS_OPS else [None]
        for d in dims:
            cases.append(case(f"single_{s}_dim{d}", *_inputs(op_name, s), params=_params(op_name, d)))
    if op_name == "vector_add":  # one element broadcast over many, and many over one
        cases.append(case("scalar_plus_row", (), (67,)))
        cases.append(case("row_plus_scalar", (67,), ()))
    _check(op_name, cases, dtype, target, seed)


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("op_name", list(OPS))
def test_sizes_around_every_vector_and_block_boundary(op_name, dtype, target, seed):
    cases = []
    for n in SIZES:
        if op_name in MATMUL_OPS:
            cases += _matmul_cases("size", n)
        elif op_name in AXIS_OPS:  # rows, and columns (the axis strided, contiguous across it)
            cases.append(case(f"rows_3x{n}", (3, n), params={"dim": -1}))
            cases.append(case(f"cols_{n}x3", (n, 3), params={"dim": 0}))
        else:
            cases.append(case(f"1d_{n}", *_inputs(op_name, (n,)), params=_params(op_name, None)))
    _check(op_name, cases, dtype, target, seed)


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("op_name", list(OPS))
def test_misaligned_data_pointers(op_name, dtype, target, seed):
    """Every input and the output start one element into their buffers."""
    cases = []
    for n in MISALIGNED_SIZES:
        if op_name in MATMUL_OPS:
            cases += _matmul_cases("offset", n, "offset", "offset")
            continue
        if op_name in AXIS_OPS:
            shape, dim = (2, n), -1
        else:
            shape, dim = (n,), None
        cases.append(case(f"offset_{shape}", *_inputs(op_name, Operand(shape, "offset")),
                          out_layout="offset", params=_params(op_name, dim)))
    if op_name == "vector_add":  # one input aligned, the other not
        cases.append(case("offset_b_only", (4097,), Operand((4097,), "offset")))
    _check(op_name, cases, dtype, target, seed)


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("op_name", AXIS_OPS)
def test_huge_rows(op_name, dtype, target, seed):
    cases = [case(f"rows_2x{HUGE_ROW}", (2, HUGE_ROW), params={"dim": 1}),
             case(f"row_1x{HUGE_ROW}_offset", Operand((1, HUGE_ROW), "offset"), params={"dim": -1})]
    _check(op_name, cases, dtype, target, seed)


# --- NaN and infinities -------------------------------------------------------------------

SPECIALS = {"nan": math.nan, "inf": math.inf, "-inf": -math.inf}


def _run(target, op, x, **params):
    out = op(x, **params, backend=target.backend)
    target.lib.synchronize()
    return target.lib.to_f64(out)


def _compare_softmax(target, x, dtype, dim, what):
    ref = reference.softmax(target.lib.to_f64(x), dim)
    got = _run(target, ort.softmax, x, dim=dim)
    assertions.assert_close(got, ref, dtype, assertions.softmax(dtype, x.shape[dim]), what)


def _compare_reduce_sum(target, x, dtype, dim, what):
    x64 = target.lib.to_f64(x)
    ref = reference.reduce_sum(x64, dim)
    with np.errstate(invalid="ignore", over="ignore"):
        l2 = np.sqrt(reference.reduce_sum(np.where(np.isfinite(x64), x64, 0.0) ** 2, dim))
    got = _run(target, ort.reduce_sum, x, dim=dim)
    assertions.assert_close(got, ref, dtype, assertions.reduction(dtype, x.shape[dim], l2), what)


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("n", [37, 1025])
@pytest.mark.parametrize("special", list(SPECIALS))
def test_special_value_in_every_position_of_a_row(special, n, dtype, target, seed):
    """Row i (and column i) holds the special value at position i: one call sweeps every
    position, along the last axis and along the first."""
    values = np.random.default_rng(seed).standard_normal((n, n), dtype=np.float32)
    np.fill_diagonal(values, SPECIALS[special])
    x = target.lib.from_numpy(values, dtype)
    for dim in (1, 0):
        _compare_softmax(target, x, dtype, dim, f"softmax {special} n={n} dim={dim}")
        _compare_reduce_sum(target, x, dtype, dim, f"reduce_sum {special} n={n} dim={dim}")


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("n", [37, 1025])
def test_special_value_pairs_in_every_position(n, dtype, target, seed):
    """+inf with -inf, NaN with +inf, and rows of -inf but for one finite value, swept over
    every position; and rows entirely of -inf, +inf or NaN."""
    rng = np.random.default_rng(seed)
    idx = np.arange(n)
    pairs = [(math.inf, -math.inf), (math.nan, math.inf), (-math.inf, math.nan)]
    for first, second in pairs:
        values = rng.standard_normal((n, n), dtype=np.float32)
        values[idx, idx] = first
        values[idx, (idx + 3) % n] = second
        x = target.lib.from_numpy(values, dtype)
        _compare_softmax(target, x, dtype, 1, f"softmax {first}/{second}")
        _compare_reduce_sum(target, x, dtype, 1, f"reduce_sum {first}/{second}")
    one_hot = np.full((n, n), -np.inf, np.float32)
    one_hot[idx, idx] = rng.standard_normal(n, dtype=np.float32)
    x = target.lib.from_numpy(one_hot, dtype)
    for dim in (1, 0):
        got = _run(target, ort.softmax, x, dim=dim)
        np.testing.assert_array_equal(got, np.eye(n), err_msg=f"one finite value, dim={dim}")
    whole = np.stack([np.full(n, v, np.float32) for v in (-np.inf, np.inf, np.nan)])
    _compare_softmax(target, target.lib.from_numpy(whole, dtype), dtype, 1, "whole rows")


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("special", list(SPECIALS))
def test_special_value_in_long_rows(special, dtype, target, seed):
    """Rows past the CPU's buffered-row limit (2^18) and long enough for the GPU's split
    paths: the special value at chunk edges, the middle and the ends."""
    n = 2**18 + 1
    positions = [0, 1, 2047, 2048, 2049, n // 2, n - 2, n - 1]
    values = np.random.default_rng(seed).standard_normal((len(positions), n), dtype=np.float32)
    values[np.arange(len(positions)), positions] = SPECIALS[special]
    x = target.lib.from_numpy(values, dtype)
    _compare_softmax(target, x, dtype, 1, f"softmax {special} long rows")
    _compare_reduce_sum(target, x, dtype, 1, f"reduce_sum {special} long rows")


# --- denormals and range limits ---------------------------------------------------------

# Per dtype: a few subnormal magnitudes (below the smallest normal), as float64.
SUBNORMALS = {
    "f32": [1.401298464324817e-45, 1e-40, 5e-39, 1.1754942e-38],
    "f16": [5.960464477539063e-08, 1e-6, 3e-5, 6.0975552e-05],
    "bf16": [9.183549615799121e-41, 1e-40, 5e-39, 1.1e-38],
}
LIMITS = {
    "f16": {"max": 65504.0, "min_normal": 2.0**-14, "min_sub": 2.0**-24},
    "bf16": {"max": float(ml_dtypes.finfo(ml_dtypes.bfloat16).max), "min_normal": 2.0**-126,
             "min_sub": 2.0**-133},
    "f32": {"max": float(np.finfo(np.float32).max), "min_normal": 2.0**-126, "min_sub": 2.0**-149},
}


def _exact(target, got, ref, dtype, what):
    assertions.assert_close(got, ref, dtype, assertions.exact(), what)


@pytest.mark.parametrize("dtype", DTYPES)
def test_denormals(dtype, target, seed):
    """Subnormal inputs are neither flushed to zero nor mangled: copy, add, relu and
    reduce_sum give the exact (or f32-accumulated) values; softmax of subnormals is
    uniform; a softmax that produces values deep in the subnormal range stays close."""
    lib, rng = target.lib, np.random.default_rng(seed)
    mags = np.array(SUBNORMALS[dtype])
    values = np.concatenate([mags, -mags, mags * 0.5, [0.0, -0.0]])
    values = np.resize(values, 4099)
    rng.shuffle(values)
    a64 = lib.to_f64(lib.from_numpy(values, dtype))  # as the dtype holds them
    b64 = np.roll(a64, 1)
    a, b = lib.from_numpy(a64, dtype), lib.from_numpy(b64, dtype)
    assert np.count_nonzero(a64) > 3000, "the subnormal inputs were flushed on the way in"
    _exact(target, _run(target, ort.copy, a), a64, dtype, "copy")
    _exact(target, lib.to_f64(ort.vector_add(a, b, backend=target.backend)), a64 + b64, dtype,
           "vector_add")
    _exact(target, _run(target, ort.relu, a), reference.relu(a64), dtype, "relu")
    _exact(target, _run(target, ort.relu, a, negative_slope=-1.0), reference.relu(a64, -1.0), dtype,
           "relu slope -1")
    # Sums of subnormals: f32 accumulation rounds once partial sums leave the subnormal
    # range (an error of a few f32 ulps of the partial sums, not of the result).
    rows = a64[:4096].reshape(64, 64)
    got = _run(target, ort.reduce_sum, lib.from_numpy(rows, dtype), dim=1)
    ref = rows.sum(axis=1)
    atol = LIMITS[dtype]["min_sub"] + 64 * assertions.EPS_F32 * np.abs(rows).sum(axis=1)
    assertions.assert_close(got, ref, dtype, (2.0**-20 if dtype == "f32" else 2.0**-9, atol),
                            "reduce_sum of subnormals")
    # softmax: subnormal inputs are ~0 next to each other: uniform rows.
    got = _run(target, ort.softmax, lib.from_numpy(rows, dtype), dim=1)
    assertions.assert_close(got, np.full_like(rows, 1 / 64), dtype, assertions.softmax(dtype, 64),
                            "softmax of subnormals")
    # softmax outputs down to the subnormal range: exp(-100) ~ 3.7e-44.
    logits = np.array([[0.0, -10.0, -50.0, -87.0, -100.0, -104.0]], np.float32)
    x = lib.from_numpy(logits, dtype)
    _compare_softmax(target, x, dtype, 1, "softmax into subnormals")


@pytest.mark.parametrize("dtype", ["f16", "bf16"])
def test_range_limits(dtype, target):
    """f16 and bf16 values at the largest finite value, the rounding edge to inf and the
    smallest normal and subnormal, through every operator."""
    lib, lim = target.lib, LIMITS[dtype]
    big, small, sub = lim["max"], lim["min_normal"], lim["min_sub"]
    a64 = np.array([big, -big, big, small, -small, sub, -sub, sub, big, 0.0])
    b64 = np.array([big, -big, -big, small, sub, sub, sub, -sub, 0.0, sub])
    a, b = lib.from_numpy(a64, dtype), lib.from_numpy(b64, dtype)
    assert (lib.to_f64(a) == a64).all() and (lib.to_f64(b) == b64).all(), "limits not representable"
    _exact(target, _run(target, ort.copy, a), a64, dtype, "copy")
    # big + big overflows to inf; big - big is 0; small + small stays exact.
    _exact(target, lib.to_f64(ort.vector_add(a, b, backend=target.backend)), a64 + b64, dtype,
           "vector_add")
    _exact(target, _run(target, ort.relu, a, negative_slope=0.5), reference.relu(a64, 0.5), dtype,
           "relu slope 0.5 (sub * 0.5 rounds to even)")
    _exact(target, _run(target, ort.relu, a, negative_slope=-2.0), reference.relu(a64, -2.0), dtype,
           "relu slope -2 (-2 * -big overflows)")
    # The rounding edge: half an ulp above max rounds to inf, just below it to max.
    if dtype == "f16":
        edge = np.array([65504.0, 65504.0, 65504.0])
        add = np.array([15.0, 16.0, 8.0])
        got = lib.to_f64(ort.vector_add(lib.from_numpy(edge, dtype), lib.from_numpy(add, dtype),
                                        backend=target.backend))
        np.testing.assert_array_equal(got, [65504.0, np.inf, 65504.0])
    # Sums: [big, big] overflows to inf, [big, -big] is 0, [small] * 64 stays exact.
    sums = np.array([[big, big], [big, -big], [-big, -big], [sub, sub]])
    got = _run(target, ort.reduce_sum, lib.from_numpy(sums, dtype), dim=1)
    _exact(target, got, sums.sum(axis=1), dtype, "reduce_sum at the limits")
    got = _run(target, ort.reduce_sum, lib.from_numpy(np.full((3, 64), small), dtype), dim=1)
    _exact(target, got, np.full(3, 64 * small), dtype, "reduce_sum of the smallest normal")
    # softmax at the limits: differences of +-2*max are -inf in f32; equal maxima split evenly.
    logits = np.array([[big, -big], [big, big], [-big, -big], [sub, -sub], [big, 0.0]])
    x = lib.from_numpy(logits, dtype)
    _compare_softmax(target, x, dtype, 1, "softmax at the limits")
    _compare_softmax(target, x, dtype, 0, "softmax at the limits, columns")
    # Rows long enough for the GPU's packed-warp, bulk and split kernels, near the largest
    # value: exp(x - max) must subtract first (max * log2(e), rounded, is off by far more
    # than 1 there: bf16 once gave NaN rows).
    rng = np.random.default_rng(7)
    for n in (1024, 4096, 70000):
        rows = big * rng.uniform(0.25, 1.0, (3, n))
        rows[:, 5] = big
        _compare_softmax(target, lib.from_numpy(rows, dtype), dtype, 1,
                         f"softmax of {n}-column rows near the limits")
