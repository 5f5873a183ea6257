"""reduce_sum: the sum over one dim (removed or kept as 1), or over every element (dim=None)."""

import numpy as np

import operator_runtime as ort
from operator_runtime_testing import assertions, reference
from operator_runtime_testing.arrays import LAYOUTS, OUTPUT_LAYOUTS
from operator_runtime_testing.cases import BenchCase, ErrorCase, OpInfo, Operand, case

from .shapes import SHAPES_ND, SIZES_1D, name


def _out_shape(shapes, params):
    shape, dim, keepdim = shapes[0], params.get("dim"), params.get("keepdim", False)
    if dim is None:
        return (1,) * len(shape) if keepdim else ()
    if not shape:
        return ()
    dims = {d % len(shape) for d in (dim if isinstance(dim, tuple) else (dim,))}
    return tuple(1 if d in dims else n for d, n in enumerate(shape)
                 if keepdim or d not in dims)


def _tolerance(dtype, inputs, params):
    (src,) = inputs
    dim, keepdim = params.get("dim"), params.get("keepdim", False)
    if dim is None or src.ndim == 0:
        axis_len = src.size
    else:
        axis_len = int(np.prod([src.shape[d] for d in (dim if isinstance(dim, tuple) else (dim,))]))
    with np.errstate(over="ignore", invalid="ignore"):
        l2 = np.sqrt(reference.reduce_sum(src * src, dim, keepdim))
    return assertions.reduction(dtype, axis_len, l2)


def _torch_sum(src, dim=None, keepdim=False):
    if dim is None:
        return src.sum().reshape((1,) * src.dim() if keepdim else ())
    return src.sum(dim=dim, keepdim=keepdim)


OP = OpInfo(
    name="reduce_sum",
    func=ort.reduce_sum,
    func_=ort.reduce_sum_,
    prepare=ort.prepare_reduce_sum,
    reference=reference.reduce_sum,
    tolerance=_tolerance,
    out_shape=_out_shape,
    inplace_params=("dim",),
    torch_reference=_torch_sum,
)


def _dims(shape):
    return range(-len(shape), len(shape))


CASES = (
    [case(f"1d_{n}", (n,), params={"dim": 0}) for n in SIZES_1D]
    + [case(f"0d_dim{d}", (), params={"dim": d, "keepdim": k})
       for d in (0, -1) for k in (False, True)]
    + [case(f"nd_{name(s)}_dim{d}", s, params={"dim": d}) for s in SHAPES_ND for d in _dims(s)]
    + [case(f"keepdim_{name(s)}_dim{d}", s, params={"dim": d, "keepdim": True})
       for s in ((3, 5, 7), (2, 0, 3)) for d in _dims(s)]
    + [case(f"empty_axis_{name(s)}_dim{d}", s, params={"dim": d})
       for s, d in (((0,), 0), ((3, 0), 1), ((3, 0), 0), ((0, 4), 0), ((2, 0, 3), 1))]
    + [case(f"{layout}_33x65_dim{d}", Operand((33, 65), layout), params={"dim": d})
       for layout in LAYOUTS for d in (0, 1)]
    + [case(f"{layout}_3x5x7_dim{d}", Operand((3, 5, 7), layout), params={"dim": d})
       for layout in LAYOUTS for d in (0, 1, 2)]
    + [case(f"out_{layout}_33x65_dim{d}_keep{k}", (33, 65), out_layout=layout,
            params={"dim": d, "keepdim": k})
       for layout in OUTPUT_LAYOUTS for d in (0, 1) for k in (False, True)]
    + [case(f"all_{name(s)}_{layout}_keep{k}", Operand(s, layout),
            params={"dim": None, "keepdim": k})
       for s, layout in (((33, 65), "contiguous"), ((33, 65), "transposed"), ((), "contiguous"),
                         ((0, 3), "contiguous"), ((3, 5, 7), "expanded"), ((70001,), "offset"))
       for k in (False, True)]
    + [case(f"dims_{name(s)}_{layout}_dim{'_'.join(map(str, d))}_keep{k}", Operand(s, layout),
            params={"dim": d, "keepdim": k})
       for s, layout, d in (((3, 5, 7), "contiguous", (1, 2)), ((3, 5, 7), "contiguous", (0, 1)),
                            ((3, 5, 7), "contiguous", (-1, 0, 1)), ((33, 65), "transposed", (0, 1)),
                            ((4, 0, 3), "contiguous", (0, 1)), ((2, 3, 4, 5), "contiguous", (1, 2)))
       for k in (False, True)]
    + [
        # Rows and columns on both sides of the CPU kernel's chunk (4096), block (16384, and
        # 1024 for axes under 8 rows) and flush (64 rows) sizes, and long rows split across threads.
        case("rows_3x4097", (3, 4097), params={"dim": 1}),
        case("rows_1x100003", (1, 100003), params={"dim": 1}),
        case("rows_8x40000", (8, 40000), params={"dim": -1}),
        case("cols_65x1025", (65, 1025), params={"dim": 0}),
        case("cols_100003x3", (100003, 3), params={"dim": 0}),
        case("cols_129x2049", (129, 2049), params={"dim": 0}),
        case("cols_3x16385", (3, 16385), params={"dim": 0}),
        case("cols_65x33000", (65, 33000), params={"dim": 0}),
        case("cols_130x16384", (130, 16384), params={"dim": 0}),
        case("mid_3x5000x7", (3, 5000, 7), params={"dim": 1}),
        case("strided_rows_1x70001", Operand((1, 70001), "strided"), params={"dim": 1}),
        case("nan_inf_dim0", (33, 65), special="nan_inf", params={"dim": 0}),
        case("nan_inf_dim1", (33, 65), special="nan_inf", params={"dim": 1}),
        case("nan_inf_all", (1025,), special="nan_inf", params={"dim": None}),
    ]
)

def _overlap(lib, backend):
    x = lib.empty((16,))
    ort.reduce_sum_(x[:4], x.reshape(4, 4), dim=1, backend=backend)


ERROR_CASES = [
    ErrorCase("dim_out_of_range", lambda L, b: ort.reduce_sum(L.empty((3, 4)), dim=2, backend=b),
              ValueError, r"dim = 2 is out of range for a 2-d src \(valid: -2\.\.1\)"),
    ErrorCase("dim_negative_out_of_range", lambda L, b: ort.reduce_sum_(
        L.empty((3,)), L.empty((3, 4)), dim=-3, backend=b), ValueError, r"dim = -3"),
    ErrorCase("dim_float", lambda L, b: ort.reduce_sum(L.empty((3, 4)), dim=1.0, backend=b),
              TypeError, r"dim must be an int, got float"),
    ErrorCase("dim_empty_tuple", lambda L, b: ort.reduce_sum(L.empty((3, 4)), dim=(),
                                                              backend=b),
              ValueError, r"dim = \(\) is ambiguous"),
    ErrorCase("dim_repeated", lambda L, b: ort.reduce_sum(L.empty((3, 4)), dim=(1, -1),
                                                           backend=b),
              ValueError, r"names a dim more than once"),
    ErrorCase("prepare_unmergeable", lambda L, b: ort.prepare_reduce_sum(
        L.empty((4,)), L.empty((2, 4, 3)), dim=(0, 2), backend=b), ValueError,
              r"cannot be viewed with dims \(0, 2\) merged"),
    ErrorCase("out_shape", lambda L, b: ort.reduce_sum_(L.empty((4,)), L.empty((3, 4)), dim=1,
                                                        backend=b),
              ValueError, r"out shape \(4\) must be in shape \(3, 4\) with axis 1 removed"),
    ErrorCase("out_dtype", lambda L, b: ort.reduce_sum_(L.empty((3,), "f16"), L.empty((3, 4)),
                                                        dim=1, backend=b),
              TypeError, r"src has dtype float32 but out has float16"),
    ErrorCase("overlap", _overlap, ValueError, r"out overlaps in"),
    ErrorCase("float64", lambda L, b: ort.reduce_sum(np.ones(3), backend=b), TypeError,
              r"src has dtype float64", libs=("numpy",)),
]


def _bench(shapes):
    """Every shape reduced over all elements, the last axis and the first axis."""
    cases = [BenchCase("2^12 all", ((4096,),), {"dim": None}, series="reduce_sum all")]
    for s in shapes:
        cases += [BenchCase(f"{name(s)} all", (s,), {"dim": None}, series="reduce_sum all"),
                  BenchCase(f"{name(s)} dim=1", (s,), {"dim": 1}, series="reduce_sum last axis"),
                  BenchCase(f"{name(s)} dim=0", (s,), {"dim": 0}, series="reduce_sum first axis")]
    return cases


_CPU_SHAPES = ((1024, 1024), (65536, 1024), (65536, 128), (128, 65536))
_GPU_SHAPES = ((144, 1280), (1024, 1024), (65536, 128), (128, 65536), (65536, 1024),
               (16384, 16384), (8, 1 << 25))
BENCH = {"cpu": _bench(_CPU_SHAPES), "gpu": _bench(_GPU_SHAPES)}
