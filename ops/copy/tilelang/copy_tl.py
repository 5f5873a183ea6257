"""copy in TileLang: out[i] = src[i] over contiguous 1-d views of n elements.

program(dtype, aligned) returns the kernel; n is a run-time size (T.dynamic), so one
compiled kernel per (dtype, aligned) serves every shape. Full blocks take a branch
without bounds checks, which TileLang vectorizes to 128-bit accesses: only valid when
every pointer is 16-byte aligned (aligned=True); the last, partial block checks each
index. operator_runtime/_tilelang.py compiles, caches and calls it.
"""

import tilelang.language as T

BLOCK = 2048  # elements per thread block: 8 per thread, one or two 128-bit accesses
THREADS = 256


def program(dtype, aligned):
    n = T.dynamic("n")

    @T.prim_func
    def copy(src: T.Tensor((n,), dtype), out: T.Tensor((n,), dtype)):
        with T.Kernel(T.ceildiv(n, BLOCK), threads=THREADS) as bx:
            base = bx * BLOCK
            if aligned and base + BLOCK <= n:
                for i in T.Parallel(BLOCK):
                    out[base + i] = src[base + i]
            else:
                for i in T.Parallel(BLOCK):
                    if base + i < n:
                        out[base + i] = src[base + i]

    return copy
