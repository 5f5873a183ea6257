"""relu: out = src > 0 ? src : negative_slope * src. Exact when negative_slope is 0."""

import math

import numpy as np

import operator_runtime as ort
from operator_runtime_testing import assertions, reference
from operator_runtime_testing.arrays import LAYOUTS, OUTPUT_LAYOUTS
from operator_runtime_testing.cases import BenchCase, ErrorCase, OpInfo, Operand, case

from .shapes import (CPU_SWEEP, GPU_SWEEP, LAYOUT_SHAPES, ODD_2D, SHAPES_ND, SIZES_1D, bench_name,
                     name, sweep_shape)


def _tolerance(dtype, inputs, params):
    if params.get("negative_slope", 0.0) == 0.0:
        return assertions.exact()
    return assertions.elementwise(dtype)


def _torch_relu(src, negative_slope=0.0):
    import torch.nn.functional as F

    return F.relu(src) if negative_slope == 0.0 else F.leaky_relu(src, negative_slope)


OP = OpInfo(
    name="relu",
    func=ort.relu,
    func_=ort.relu_,
    prepare=ort.prepare_relu,
    reference=reference.relu,
    tolerance=_tolerance,
    out_shape=lambda shapes, params: shapes[0],
    inplace_params=("negative_slope",),
    torch_reference=_torch_relu,
)

SLOPES = (0.1, -1.5, 1.0)

CASES = (
    [case(f"1d_{n}", (n,)) for n in SIZES_1D]
    + [case("0d", ())]
    + [case(f"nd_{name(s)}", s) for s in SHAPES_ND]
    + [case(f"slope_{s}_1025", (1025,), params={"negative_slope": s}) for s in SLOPES]
    + [case(f"{layout}_{name(s)}", Operand(s, layout), params={"negative_slope": 0.1})
       for s in LAYOUT_SHAPES for layout in LAYOUTS]
    + [case(f"out_{layout}_{name(s)}", s, out_layout=layout)
       for s in LAYOUT_SHAPES for layout in OUTPUT_LAYOUTS]
    + [
        case("transposed_to_strided", Operand((33, 65), "transposed"), out_layout="strided"),
        case("large_sliced", Operand((257, 1025), "sliced"), params={"negative_slope": 0.01}),
        case("inplace", (1025,), inplace=True),
        case("inplace_slope", Operand((33, 65), "permuted"), params={"negative_slope": 0.2},
             inplace=True),
        case("nan_inf", (1025,), special="nan_inf"),
        case("nan_inf_slope", (33, 65), special="nan_inf", params={"negative_slope": 0.1}),
    ]
)

def _stride0_out(lib, backend):
    one = lib.empty((1,))
    # A writable output whose 4 elements share one address.
    out = (np.lib.stride_tricks.as_strided(one, (4,), (0,)) if lib.name == "numpy"
           else lib.broadcast_to(one, (4,)))
    ort.relu_(out, lib.empty((4,)), backend=backend)


ERROR_CASES = [
    ErrorCase("shape_mismatch", lambda L, b: ort.relu_(L.empty((3, 4)), L.empty((3, 5)),
                                                       backend=b), ValueError, r"\bin dim 1"),
    ErrorCase("slope_str", lambda L, b: ort.relu(L.empty((3,)), "0.1", backend=b), TypeError,
              r"negative_slope must be a real number"),
    ErrorCase("slope_nan", lambda L, b: ort.relu(L.empty((3,)), math.nan, backend=b), ValueError,
              r"negative_slope = nan is not a finite float32"),
    ErrorCase("slope_overflows_f32", lambda L, b: ort.relu(L.empty((3,)), 1e300, backend=b), ValueError,
              r"negative_slope = 1e\+300 is not a finite float32"),
    ErrorCase("dtype_mismatch", lambda L, b: ort.relu_(L.empty((3,), "bf16"), L.empty((3,), "f16"),
                                                       backend=b),
              TypeError, r"src has dtype float16 but out has bfloat16"),
    ErrorCase("float64", lambda L, b: ort.relu(np.zeros((2, 2)), backend=b), TypeError,
              r"src has dtype float64", libs=("numpy",)),
    ErrorCase("stride0_out", _stride0_out, ValueError, r"out\.strides\[0\] = 0"),
]


def _bench(sizes):
    shapes = [sweep_shape(n) for n in sizes] + [ODD_2D]
    return [BenchCase(bench_name(s), (s,)) for s in shapes] + [
        BenchCase("65536x1024 slope=0.1", ((65536, 1024),), {"negative_slope": 0.1},
                  series="relu, slope 0.1")]


BENCH = {"cpu": _bench(CPU_SWEEP), "gpu": _bench(GPU_SWEEP)}
