"""silu: out = src * sigmoid(src), elementwise, against the float64 reference."""

import numpy as np

import operator_runtime as ort
from operator_runtime_testing import assertions, reference
from operator_runtime_testing.arrays import LAYOUTS, OUTPUT_LAYOUTS
from operator_runtime_testing.cases import BenchCase, ErrorCase, OpInfo, Operand, case

from .shapes import (CPU_SWEEP, GPU_SWEEP, LAYOUT_SHAPES, ODD_2D, SHAPES_ND, SIZES_1D, bench_name,
                     name, sweep_shape)


def _tolerance(dtype, inputs, params):
    return assertions.elementwise(dtype)


def _torch_silu(src):
    """PyTorch's silu, except at -inf: there it gives NaN (-inf / inf) where we give the
    limit, -0 (include/operator_runtime/ops/silu.h)."""
    import torch
    import torch.nn.functional as F

    return torch.where(src == -torch.inf, torch.zeros_like(src).neg(), F.silu(src))


OP = OpInfo(
    name="silu",
    func=ort.silu,
    func_=ort.silu_,
    prepare=ort.prepare_silu,
    reference=reference.silu,
    tolerance=_tolerance,
    out_shape=lambda shapes, params: shapes[0],
    torch_reference=_torch_silu,
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
        case("large_sliced", Operand((257, 1025), "sliced")),
        case("inplace", (1025,), inplace=True),
        case("inplace_permuted", Operand((33, 65), "permuted"), inplace=True),
        case("nan_inf", (1025,), special="nan_inf"),
        case("nan_inf_2d", (33, 65), special="nan_inf"),
    ]
)

ERROR_CASES = [
    ErrorCase("shape_mismatch", lambda L, b: ort.silu_(L.empty((3, 4)), L.empty((3, 5)),
                                                       backend=b), ValueError, r"\bin dim 1"),
    ErrorCase("dtype_mismatch", lambda L, b: ort.silu_(L.empty((3,), "bf16"), L.empty((3,), "f16"),
                                                       backend=b),
              TypeError, r"src has dtype float16 but out has bfloat16"),
    ErrorCase("float64", lambda L, b: ort.silu(np.zeros((2, 2)), backend=b), TypeError,
              r"src has dtype float64", libs=("numpy",)),
]


def _bench(sizes):
    shapes = [sweep_shape(n) for n in sizes] + [ODD_2D]
    return [BenchCase(bench_name(s), (s,)) for s in shapes]


BENCH = {"cpu": _bench(CPU_SWEEP), "gpu": _bench(GPU_SWEEP)}
