"""vector_add: out = a + b, a and b broadcast to out by numpy rules."""

import numpy as np

import operator_runtime as ort
from operator_runtime_testing import assertions, reference
from operator_runtime_testing.arrays import LAYOUTS, OUTPUT_LAYOUTS
from operator_runtime_testing.cases import BenchCase, ErrorCase, OpInfo, Operand, case

from .shapes import (CPU_SWEEP, GPU_SWEEP, LAYOUT_SHAPES, ODD_2D, SHAPES_ND, SIZES_1D, bench_name,
                     name, sweep_shape)

OP = OpInfo(
    name="vector_add",
    func=ort.vector_add,
    func_=ort.vector_add_,
    prepare=ort.prepare_vector_add,
    reference=reference.vector_add,
    tolerance=lambda dtype, inputs, params: assertions.elementwise(dtype),
    out_shape=lambda shapes, params: np.broadcast_shapes(*shapes),
    torch_reference=lambda a, b: a + b,
)

# (a shape, b shape) pairs that broadcast.
BROADCASTS = (
    ((4, 1, 5), (3, 5)),
    ((5,), (3, 5)),
    ((), (7,)),
    ((3, 1), (1, 4)),
    ((2, 3, 4, 5), (5,)),
    ((2, 1, 4, 1), (3, 1, 5)),
    ((0, 3), (1, 3)),
    ((1,), (1025,)),
    ((1025, 1), (1, 33)),
)

CASES = (
    [case(f"1d_{n}", (n,), (n,)) for n in SIZES_1D]
    + [case("0d", (), ())]
    + [case(f"nd_{name(s)}", s, s) for s in SHAPES_ND]
    + [case(f"bcast_{name(a)}_{name(b)}", a, b) for a, b in BROADCASTS]
    + [case(f"a_{layout}_{name(s)}", Operand(s, layout), s) for s in LAYOUT_SHAPES
       for layout in LAYOUTS]
    + [case(f"b_{layout}_{name(s)}", s, Operand(s, layout)) for s in LAYOUT_SHAPES
       for layout in LAYOUTS]
    + [case(f"out_{layout}_{name(s)}", s, s, out_layout=layout) for s in LAYOUT_SHAPES
       for layout in OUTPUT_LAYOUTS]
    + [
        case("transposed_plus_strided_to_sliced", Operand((33, 65), "transposed"),
             Operand((33, 65), "strided"), out_layout="sliced"),
        case("offset_plus_contiguous", Operand((1025,), "offset"), (1025,)),
        case("expanded_both", Operand((3, 5, 7), "expanded"), Operand((3, 5, 7), "expanded")),
        case("bcast_transposed", Operand((4, 3, 5), "transposed"), (3, 5), out_layout="permuted"),
        case("large_strided", Operand((257, 1025), "strided"), (1025,)),
        case("inplace", (1025,), (1025,), inplace=True),
        case("inplace_bcast", (33, 65), (65,), inplace=True),
        case("inplace_transposed", Operand((33, 65), "transposed"), (33, 65), inplace=True),
        case("nan_inf", (1025,), (1025,), special="nan_inf"),
        case("nan_inf_bcast", (33, 65), (1, 65), special="nan_inf"),
    ]
)


def _overlap(lib, backend):
    x = lib.empty((10,))
    ort.vector_add_(x[1:], x[:-1], x[1:], backend=backend)


ERROR_CASES = [
    ErrorCase("no_broadcast", lambda L, b: ort.vector_add(L.empty((3,)), L.empty((4,)), backend=b),
              ValueError, r"a of shape \(3,\) and b of shape \(4,\) do not broadcast"),
    ErrorCase("out_shape", lambda L, b: ort.vector_add_(L.empty((3, 4)), L.empty((4, 4)),
                                                        L.empty((4,)), backend=b),
              ValueError, r"\ba dim 0 has size 4"),
    ErrorCase("out_too_few_dims", lambda L, b: ort.vector_add_(L.empty((4,)), L.empty((3, 4)),
                                                               L.empty((4,)), backend=b),
              ValueError, r"\ba has 2 dims and cannot broadcast to out"),
    ErrorCase("dtype_mismatch", lambda L, b: ort.vector_add(L.empty((3,)), L.empty((3,), "bf16"),
                                                            backend=b),
              TypeError, r"b has dtype bfloat16 but a has float32"),
    ErrorCase("out_dtype", lambda L, b: ort.vector_add_(L.empty((3,), "f16"), L.empty((3,)),
                                                        L.empty((3,)), backend=b),
              TypeError, r"a has dtype float32 but out has float16"),
    ErrorCase("tuple_input", lambda L, b: ort.vector_add(L.empty((3,)), (1.0, 2.0, 3.0),
                                                         backend=b),
              TypeError, r"b is a builtins\.tuple"),
    ErrorCase("partial_overlap", _overlap, ValueError, r"out overlaps a"),
    ErrorCase("readonly_out", lambda L, b: ort.vector_add_(np.broadcast_to(
        np.zeros(1, np.float32), (3,)), np.zeros(3, np.float32), np.zeros(3, np.float32),
        backend=b), ValueError, r"out is read-only", libs=("numpy",)),
]


def _bench(sizes):
    shapes = [sweep_shape(n) for n in sizes] + [ODD_2D]
    return [BenchCase(bench_name(s), (s, s)) for s in shapes] + [
        BenchCase("65536x1024+1024", ((65536, 1024), (1024,)), series="vector_add, b a row")]


BENCH = {"cpu": _bench(CPU_SWEEP), "gpu": _bench(GPU_SWEEP)}
