"""Shapes shared by the operators' cases: odd sizes on both sides of the vector widths,
OpenMP grain (1 << 15 elements) and block sizes the kernels switch at."""

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
