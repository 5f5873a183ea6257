"""softmax along one dim: max-subtracted; NaN propagates; an all -inf slice gives NaN."""

import numpy as np

import operator_runtime as ort
from operator_runtime_testing import assertions, reference
from operator_runtime_testing.arrays import LAYOUTS, OUTPUT_LAYOUTS
from operator_runtime_testing.cases import BenchCase, ErrorCase, OpInfo, Operand, case

from .shapes import SHAPES_ND, name


def _tolerance(dtype, inputs, params):
    (src,) = inputs
    axis_len = src.shape[params.get("dim", -1)] if src.ndim else 1
    return assertions.softmax(dtype, axis_len)


OP = OpInfo(
    name="softmax",
    func=ort.softmax,
    func_=ort.softmax_,
    prepare=ort.prepare_softmax,
    reference=reference.softmax,
    tolerance=_tolerance,
    out_shape=lambda shapes, params: shapes[0],
    inplace_params=("dim",),
    torch_reference=lambda src, dim=-1: src.softmax(dim),
)

# Row lengths on both sides of 16/32 lanes, a 1024-wide block, the CPU's 2048-element
# streaming chunk and its 2^18-element in-cache row limit.
ROW_LENGTHS = (1, 2, 31, 32, 33, 1023, 1024, 1025, 2047, 2049, 16384, 16385, 20000, 262144, 262145)


def _dims(shape):
    return range(-len(shape), len(shape))


CASES = (
    [case(f"rows_3x{n}", (3, n), params={"dim": -1}) for n in ROW_LENGTHS]
    + [case(f"1d_{n}", (n,), params={"dim": 0}) for n in (0, 1, 129, 4097)]
    + [case(f"cols_{n}x3", (n, 3), params={"dim": 0}) for n in (1, 33, 1025, 16385)]
    + [case(f"0d_dim{d}", (), params={"dim": d}) for d in (0, -1)]
    + [case(f"nd_{name(s)}_dim{d}", s, params={"dim": d}) for s in SHAPES_ND for d in _dims(s)]
    + [case(f"empty_{name(s)}_dim{d}", s, params={"dim": d})
       for s, d in (((0, 5), 1), ((0, 5), 0), ((5, 0), 1))]
    + [case(f"{layout}_33x65_dim{d}", Operand((33, 65), layout), params={"dim": d})
       for layout in LAYOUTS for d in (0, 1)]
    + [case(f"{layout}_3x5x7_dim{d}", Operand((3, 5, 7), layout), params={"dim": d})
       for layout in LAYOUTS for d in (0, 1, 2)]
    + [case(f"out_{layout}_33x65_dim{d}", (33, 65), out_layout=layout, params={"dim": d})
       for layout in OUTPUT_LAYOUTS for d in (0, 1)]
    + [
        case("transposed_to_strided_long", Operand((17, 2049), "transposed"),
             out_layout="strided", params={"dim": 1}),
        case("strided_long_rows", Operand((2, 270000), "strided"), params={"dim": 1}),
        case("nan_inf_dim0", (33, 65), special="nan_inf", params={"dim": 0}),
        case("nan_inf_dim1", (33, 65), special="nan_inf", params={"dim": 1}),
        case("nan_inf_long", (2, 270000), special="nan_inf", params={"dim": 1}),
        case("neg_inf_row", (33, 65), special="neg_inf_slice", params={"dim": 1}),
        case("neg_inf_col", (33, 65), special="neg_inf_slice", params={"dim": 0}),
        case("neg_inf_long_row", (2, 270000), special="neg_inf_slice", params={"dim": 1}),
        case("neg_inf_head", (3, 1025), special="neg_inf_head", params={"dim": 1}),
        case("neg_inf_head_long", (2, 270000), special="neg_inf_head", params={"dim": 1}),
    ]
)


def _inplace(lib, backend):
    x = lib.empty((3, 4))
    ort.softmax_(x, x, dim=1, backend=backend)


ERROR_CASES = [
    ErrorCase("dim_out_of_range", lambda L, b: ort.softmax(L.empty((3, 4)), dim=-3, backend=b),
              ValueError, r"dim = -3 is out of range for a 2-d src \(valid: -2\.\.1\)"),
    ErrorCase("dim_0d", lambda L, b: ort.softmax(L.empty(()), dim=1, backend=b), ValueError,
              r"dim = 1 is out of range for a 0-d src"),
    ErrorCase("dim_str", lambda L, b: ort.softmax(L.empty((3,)), dim="0", backend=b), TypeError,
              r"dim must be an int, got str"),
    ErrorCase("out_shape", lambda L, b: ort.softmax_(L.empty((4, 3)), L.empty((3, 4)),
                                                     backend=b),
              ValueError, r"out shape \(4, 3\) must equal in shape \(3, 4\)"),
    ErrorCase("inplace", _inplace, ValueError, r"cannot run in place"),
    ErrorCase("prepare_dtype", lambda L, b: ort.prepare_softmax(L.empty((3,), "f16"),
                                                                L.empty((3,), "bf16"), backend=b),
              TypeError, r"src has dtype bfloat16 but out has float16"),
    ErrorCase("int64", lambda L, b: ort.softmax(np.ones(3, np.int64), backend=b), TypeError,
              r"src has dtype int64", libs=("numpy",)),
]


def _bench(shapes):
    return [BenchCase(name(s), (s,)) for s in shapes]  # the last axis


# The first benchmarks' shapes, then the rows of the performance issue (short rows with many
# of them, to rows of 2^20 elements).
_SEED_SHAPES = ((4, 1024), (1024, 1024), (65536, 1024), (256, 262144))
_GPU_SHAPES = _SEED_SHAPES + (
    (1, 128), (16, 128), (144, 1280), (1008, 1280), (1008, 2304), (2032, 2304), (784, 3840),
    (4080, 1536), (32768, 32), (32768, 128), (16384, 1024), (8192, 4096), (4096, 16384),
    (2048, 65536), (1024, 131072), (256, 1048576))
_CPU_SHAPES = _SEED_SHAPES + ((16, 128), (144, 1280), (32768, 128), (8192, 4096))
BENCH = {"cpu": _bench(_CPU_SHAPES), "gpu": _bench(_GPU_SHAPES)}
