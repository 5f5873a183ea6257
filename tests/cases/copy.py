"""copy: dst = src (src broadcasts to dst). Exact in every dtype."""

import numpy as np

import operator_runtime as ort
from operator_runtime_testing import assertions, reference
from operator_runtime_testing.arrays import LAYOUTS, OUTPUT_LAYOUTS
from operator_runtime_testing.cases import BenchCase, ErrorCase, OpInfo, Operand, case

from .shapes import (CPU_SWEEP, GPU_SWEEP, LAYOUT_SHAPES, ODD_2D, SHAPES_ND, SIZES_1D, bench_name,
                     name, sweep_shape)

OP = OpInfo(
    name="copy",
    func=ort.copy,
    func_=ort.copy_,
    prepare=ort.prepare_copy,
    reference=reference.copy,
    tolerance=lambda dtype, inputs, params: assertions.exact(),
    out_shape=lambda shapes, params: shapes[0],
    torch_reference=lambda src: src.clone(),
)

CASES = (
    [case(f"1d_{n}", (n,)) for n in SIZES_1D]
    + [case("0d", ())]
    + [case(f"nd_{name(s)}", s) for s in SHAPES_ND]
    + [case(f"{layout}_{name(s)}", Operand(s, layout)) for s in LAYOUT_SHAPES for layout in LAYOUTS]
    + [case(f"out_{layout}_{name(s)}", s, out_layout=layout)
       for s in LAYOUT_SHAPES for layout in OUTPUT_LAYOUTS]
    + [
        case("transposed_to_strided", Operand((33, 65), "transposed"), out_layout="strided"),
        case("offset_0d", Operand((), "offset"), out_layout="offset"),
        case("large_strided", Operand((257, 1025), "strided"), out_layout="permuted"),
        case("inplace", (1025,), inplace=True),
        case("inplace_strided", Operand((33, 65), "strided"), inplace=True),
        case("nan_inf", (1025,), special="nan_inf"),
        case("nan_inf_transposed", Operand((33, 65), "transposed"), special="nan_inf"),
    ]
)


def _readonly_dst(lib, backend):
    dst = np.broadcast_to(np.zeros(3, np.float32), (2, 3))
    ort.copy_(dst, np.zeros((2, 3), np.float32), backend=backend)


def _stride0_dst(lib, backend):
    dst = np.lib.stride_tricks.as_strided(np.zeros(4, np.float32), shape=(4,), strides=(0,))
    ort.copy_(dst, np.zeros(4, np.float32), backend=backend)


def _misaligned_src(lib, backend):
    src = np.frombuffer(bytearray(17), dtype=np.float32, count=4, offset=1)
    ort.copy(src, backend=backend)


def _overlap(lib, backend):
    x = lib.empty((10,))
    ort.copy_(x[1:], x[:-1], backend=backend)


ERROR_CASES = [
    ErrorCase("shape_mismatch", lambda L, b: ort.copy_(L.empty((3, 4)), L.empty((4, 3)),
                                                       backend=b), ValueError, r"\bsrc\b"),
    ErrorCase("dtype_mismatch", lambda L, b: ort.copy_(L.empty((3,)), L.empty((3,), "f16"),
                                                       backend=b),
              TypeError, r"src has dtype float16 but dst has float32"),
    ErrorCase("float64", lambda L, b: ort.copy(np.zeros(3), backend=b), TypeError,
              r"src has dtype float64", libs=("numpy",)),
    ErrorCase("int32", lambda L, b: ort.copy(np.arange(3, dtype=np.int32), backend=b),
              TypeError, r"src has dtype int32", libs=("numpy",)),
    ErrorCase("list", lambda L, b: ort.copy([1.0, 2.0], backend=b), TypeError,
              r"src is a builtins\.list"),
    ErrorCase("python_float_dst", lambda L, b: ort.copy_(1.0, L.empty((1,)), backend=b),
              TypeError, r"dst is a builtins\.float"),
    ErrorCase("mixed_libraries", lambda L, b: ort.copy_(L.empty((3,)), np.zeros(3, np.float32),
                                                        backend=b),
              TypeError, r"src is a numpy array but dst is a torch tensor", libs=("torch",)),
    ErrorCase("readonly_dst", _readonly_dst, ValueError, r"dst is read-only", libs=("numpy",)),
    ErrorCase("stride0_dst", _stride0_dst, ValueError, r"dst\.strides\[0\] = 0",
              libs=("numpy",)),
    ErrorCase("overlap", _overlap, ValueError, r"overlaps src"),
    ErrorCase("negative_stride", lambda L, b: ort.copy(np.zeros(4, np.float32)[::-1], backend=b),
              ValueError, r"src has a negative stride", libs=("numpy",)),
    ErrorCase("misaligned", _misaligned_src, ValueError, r"src = 0x[0-9a-f]+ is not aligned",
              libs=("numpy",)),
    ErrorCase("nine_dims", lambda L, b: ort.copy(L.empty((1,) * 9), backend=b), ValueError,
              r"src has 9 dims; at most 8"),
    ErrorCase("unknown_backend", lambda L, b: ort.copy(L.empty((3,)), backend="gpu"), ValueError,
              r"backend = 'gpu' is not one of"),
    # Without tilelang installed: the reason and the pip extra; with it: host arrays refused.
    ErrorCase("tilelang_host_array",
              lambda L, b: ort.copy(np.zeros(3, np.float32), backend="tilelang"),
              ort.OperatorRuntimeError,
              r"tilelang backend (is not available: .*pip install 'operator-runtime\[tilelang\]'"
              r"|runs on torch tensors in CUDA memory)"),
]


def _bench(sizes):
    shapes = [sweep_shape(n) for n in sizes] + [ODD_2D]
    return [BenchCase(bench_name(s), (s,)) for s in shapes]


BENCH = {"cpu": _bench(CPU_SWEEP), "gpu": _bench(GPU_SWEEP)}
