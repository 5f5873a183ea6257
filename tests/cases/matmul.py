"""matmul: out (M, N) = a (M, K) @ b (K, N), products summed in f32."""

import math

import numpy as np

import operator_runtime as ort
from operator_runtime_testing import assertions, reference
from operator_runtime_testing.arrays import LAYOUTS, OUTPUT_LAYOUTS
from operator_runtime_testing.cases import BenchCase, ErrorCase, OpInfo, Operand, case


def _tolerance(dtype, inputs, params):
    """The output's own rounding (rtol of its dtype) plus the f32 accumulation: K products
    whose rounding errors grow like sqrt(K) times the size of the terms, |a| @ |b| (one
    bound per element; the inputs are already in the dtype, so 16-bit inputs add nothing)."""
    a, b = inputs
    rtol, atol = assertions.TOLERANCES[dtype]
    with np.errstate(invalid="ignore", over="ignore"):
        scale = np.nan_to_num(np.abs(a) @ np.abs(b), nan=0.0, posinf=0.0)
    return rtol, atol + 4.0 * assertions.EPS_F32 * math.sqrt(max(a.shape[1], 1)) * scale


OP = OpInfo(
    name="matmul",
    func=ort.matmul,
    func_=ort.matmul_,
    prepare=ort.prepare_matmul,
    reference=reference.matmul,
    tolerance=_tolerance,
    out_shape=lambda shapes, params: (shapes[0][0], shapes[1][1]),
    # In float64: torch's own 16-bit matmul may sum in 16 bits (cuBLAS's reduced-precision
    # split-K, allowed by default), several ulps from the f32 sums this op promises.
    torch_reference=lambda a, b: a.double() @ b.double(),
)


def shape_inputs(shape):
    """The operands of `run_ops.py --shape`: M x K x N is a (M, K) @ b (K, N); M x K has N = K
    (512x512 is 512 x 512 x 512)."""
    if len(shape) not in (2, 3):
        raise ValueError("matmul reads a --shape as M x K x N, or M x K for N = K")
    m, k = shape[:2]
    return (m, k), (k, shape[2] if len(shape) == 3 else k)


def _mm(m, k, n, a_layout="contiguous", b_layout="contiguous", **kw):
    tag = "" if (a_layout, b_layout) == ("contiguous", "contiguous") else f"_{a_layout}_{b_layout}"
    return case(f"{m}x{k}x{n}{tag}", Operand((m, k), a_layout), Operand((k, n), b_layout), **kw)


# (M, K, N): none a multiple of the CPU's 6 x 16 micro-tile or 96 x 128 tile, nor of the
# GPU kernels' 16..128 tiles (but a few skinny ones); K past one 256-deep CPU slice; K = 0
# (zeros) and empty M, N.
SIZES = (
    (1, 1, 1), (1, 7, 33), (7, 1, 129), (33, 127, 7), (127, 129, 255), (129, 255, 127),
    (255, 33, 129), (64, 64, 64), (128, 128, 128), (97, 300, 61), (200, 520, 150),
    (257, 129, 385), (16, 1000, 48), (5, 0, 7), (0, 3, 4), (3, 4, 0),
    # Skinny products with few tiles of C: the GPU plan splits K (K not a whole number of
    # pieces in the last two).
    (16, 1024, 260), (64, 1000, 132), (3, 2000, 36),
)

CASES = (
    [_mm(m, k, n) for m, k, n in SIZES]
    # Every layout of a, then of b (row- and column-major, strided, sliced, broadcast).
    + [_mm(33, 65, 47, layout, "contiguous") for layout in LAYOUTS if layout != "contiguous"]
    + [_mm(33, 65, 47, "contiguous", layout) for layout in LAYOUTS if layout != "contiguous"]
    + [_mm(130, 70, 131, "transposed", "transposed"), _mm(129, 257, 65, "transposed", "contiguous"),
       _mm(129, 257, 65, "contiguous", "transposed"), _mm(100, 300, 140, "strided", "sliced")]
    + [_mm(33, 65, 47, out_layout=layout) for layout in OUTPUT_LAYOUTS if layout != "contiguous"]
    + [case("nan_inf", (33, 65), (65, 47), special="nan_inf"),
       case("nan_inf_129x255x127", (129, 255), (255, 127), special="nan_inf")]
)


def _overlap(lib, backend):
    x = lib.empty((4, 8))
    ort.matmul_(x[:, :4], x[:, 2:6], lib.empty((4, 4)), backend=backend)


ERROR_CASES = [
    ErrorCase("k_mismatch", lambda L, b: ort.matmul(L.empty((3, 4)), L.empty((5, 2)), backend=b),
              ValueError, r"a of shape \(3, 4\) and b of shape \(5, 2\) do not multiply"),
    ErrorCase("k_mismatch_out", lambda L, b: ort.matmul_(L.empty((3, 2)), L.empty((3, 4)),
                                                          L.empty((5, 2)), backend=b),
              ValueError, r"a of shape \(3, 4\) and b of shape \(5, 2\) do not multiply"),
    ErrorCase("out_shape", lambda L, b: ort.matmul_(L.empty((3, 3)), L.empty((3, 4)),
                                                     L.empty((4, 2)), backend=b),
              ValueError, r"out has shape \(3, 3\) but a \(3, 4\) @ b \(4, 2\) has shape \(3, 2\)"),
    ErrorCase("a_1d", lambda L, b: ort.matmul(L.empty((4,)), L.empty((4, 2)), backend=b),
              ValueError, r"a has shape \(4,\) \(1 dims\); matmul takes 2-D"),
    ErrorCase("b_3d", lambda L, b: ort.matmul_(L.empty((3, 2)), L.empty((3, 4)),
                                                L.empty((1, 4, 2)), backend=b),
              ValueError, r"b has shape \(1, 4, 2\) \(3 dims\)"),
    ErrorCase("dtype_mismatch", lambda L, b: ort.matmul(L.empty((3, 4)), L.empty((4, 2), "bf16"),
                                                        backend=b),
              TypeError, r"b has dtype bfloat16 but a has float32"),
    ErrorCase("out_overlaps_a", _overlap, ValueError, r"out overlaps a"),
    ErrorCase("readonly_out", lambda L, b: ort.matmul_(np.broadcast_to(
        np.zeros(1, np.float32), (3, 2)), np.zeros((3, 4), np.float32), np.zeros((4, 2), np.float32),
        backend=b), ValueError, r"out is read-only", libs=("numpy",)),
]


def _square(sizes):
    return [BenchCase(f"{s}x{s}x{s}", ((s, s), (s, s)), series="matmul, square") for s in sizes]


# GPU: squares, and skinny M (a few rows against a 4096 x 4096 weight, as in decoding).
BENCH = {
    "cpu": _square((256, 512, 1024)) + [BenchCase("64x1024x1024", ((64, 1024), (1024, 1024)),
                                                   series="matmul, skinny M")],
    "gpu": _square((256, 512, 1024, 2048, 4096, 8192))
    + [BenchCase(f"{m}x4096x4096", ((m, 4096), (4096, 4096)), series="matmul, skinny M")
       for m in (16, 64, 128)],
}
