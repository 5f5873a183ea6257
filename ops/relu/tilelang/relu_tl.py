"""relu in TileLang: out = x > 0 ? x : negative_slope * x in f32, rounded once, over
contiguous 1-d views of n elements.

As in the C backends, slope 0 is the plain ReLU: -inf gives 0 (not 0 * -inf = NaN) and
NaN stays NaN for every slope. negative_slope is a kernel argument and n a run-time size,
so one compiled kernel per (dtype, aligned) serves every slope and shape. Full blocks
vectorize to 128-bit accesses when every pointer is 16-byte aligned (aligned=True).
"""

import tilelang.language as T

BLOCK = 2048
THREADS = 256


def program(dtype, aligned):
    n = T.dynamic("n")

    @T.macro
    def relu_one(src, out, i, j, negative_slope):
        x = T.cast(src[i], "float32")
        # T.isnan, not x != x: the IR simplifier may fold x != x to false.
        negative = T.if_then_else(negative_slope == T.float32(0),
                                  T.if_then_else(T.isnan(x), x, T.float32(0)),
                                  negative_slope * x)
        out[j] = T.cast(T.if_then_else(x > T.float32(0), x, negative), dtype)

    @T.prim_func
    def relu(src: T.Tensor((n,), dtype), out: T.Tensor((n,), dtype),
             negative_slope: T.float32):
        with T.Kernel(T.ceildiv(n, BLOCK), threads=THREADS) as bx:
            base = bx * BLOCK
            if aligned and base + BLOCK <= n:
                # Through registers: the plain loads and stores vectorize, the select
                # in between would keep them scalar.
                buf = T.alloc_fragment((BLOCK,), dtype)
                for i in T.Parallel(BLOCK):
                    buf[i] = src[base + i]
                for i in T.Parallel(BLOCK):
                    relu_one(buf, buf, i, i, negative_slope)
                for i in T.Parallel(BLOCK):
                    out[base + i] = buf[i]
            else:
                for i in T.Parallel(BLOCK):
                    if base + i < n:
                        relu_one(src, out, base + i, base + i, negative_slope)

    return relu
