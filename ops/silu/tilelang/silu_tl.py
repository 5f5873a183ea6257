"""silu in TileLang: out = x * sigmoid(x) in f32, rounded once, over contiguous 1-d views
of n elements.

The math is that of the C backends (include/operator_runtime/ops/silu.h,
ops/silu/nvidia/kernel.cuh): with e = exp(-|x|) in (0, 1], which never
overflows, sigmoid(x) = 1 / (1 + e) for x >= 0 and e / (1 + e) for x < 0. Once e
underflows the result is -0, also for x = -inf (where x * 0 would be NaN); NaN stays NaN.
exp is the accurate expf: the kernels compile without fast math (_tilelang.py), so
subnormal inputs are not flushed either. Full blocks vectorize to 128-bit accesses when
every pointer is 16-byte aligned (aligned=True).
"""

import tilelang.language as T

BLOCK = 2048
THREADS = 256


def program(dtype, aligned):
    n = T.dynamic("n")

    @T.macro
    def silu_one(src, out, i, j):
        x = T.cast(src[i], "float32")
        e = T.exp(-T.abs(x))
        s = T.if_then_else(x >= T.float32(0), T.float32(1), e) / (T.float32(1) + e)
        out[j] = T.cast(T.if_then_else(s == T.float32(0), T.float32(-0.0), x * s), dtype)

    @T.prim_func
    def silu(src: T.Tensor((n,), dtype), out: T.Tensor((n,), dtype)):
        with T.Kernel(T.ceildiv(n, BLOCK), threads=THREADS) as bx:
            base = bx * BLOCK
            if aligned and base + BLOCK <= n:
                # Through registers: the plain loads and stores vectorize, the math in
                # between would keep them scalar.
                buf = T.alloc_fragment((BLOCK,), dtype)
                for i in T.Parallel(BLOCK):
                    buf[i] = src[base + i]
                for i in T.Parallel(BLOCK):
                    silu_one(buf, buf, i, i)
                for i in T.Parallel(BLOCK):
                    out[base + i] = buf[i]
            else:
                for i in T.Parallel(BLOCK):
                    if base + i < n:
                        silu_one(src, out, base + i, base + i)

    return silu
