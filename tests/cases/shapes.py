"""Shapes shared by the operators' cases: odd sizes on both sides of the vector widths,
the CPU parallel grain (1 << 15 elements) and block sizes the kernels switch at."""

# 1-d sizes: empty, single, around 16/32-lane vectors and 1024/4096-element blocks.
SIZES_1D = (0, 1, 3, 31, 33, 127, 129, 1023, 1025, 4097, (1 << 15) + 3)

# Multi-dimensional shapes, 3-d up to 8-d, some with size-1 and size-0 dims.
SHAPES_ND = (
    (2, 0, 3),
    (3, 5, 7),
    (2, 3, 4, 5),
    (2, 1, 3, 1, 5),
    (2, 3, 1, 2, 3, 2),
    (2, 2, 1, 3, 2, 2, 3),
    (2, 1, 3, 2, 2, 1, 3, 2),
)

# A 2-d and a 3-d shape every layout is tried on.
LAYOUT_SHAPES = ((33, 65), (3, 5, 7))


def name(shape):
    """A case-name fragment for a shape: 33x65, or 0d."""
    return "x".join(map(str, shape)) if shape else "0d"


# Benchmark sets (run_ops --mode bench). The elementwise sweep: every power of two from 2^12
# to 2^28 elements on GPUs, a few on the CPU (2 cores); three sizes keep the 2-d shapes of
# the first benchmarks (the plans collapse dense 2-d to 1-d, so they run the 1-d kernels).
GPU_SWEEP = tuple(1 << k for k in range(12, 29))
CPU_SWEEP = (1 << 12, 1 << 16, 1 << 20, 1 << 24, 1 << 26)
_SWEEP_2D = {1 << 20: (1024, 1024), 1 << 26: (65536, 1024), 1 << 28: (262144, 1024)}
ODD_2D = (4097, 4099)  # no size a multiple of a vector width


def sweep_shape(numel):
    return _SWEEP_2D.get(numel, (numel,))


def bench_name(shape):
    """A benchmark case's name for a shape: 2^k for a 1-d power of two, else 4097x4099."""
    if len(shape) == 1 and shape[0] > 0 and shape[0] & (shape[0] - 1) == 0:
        return f"2^{shape[0].bit_length() - 1}"
    return name(shape)
