"""reduce_sum in TileLang: out[r] = the sum of row r of a contiguous (m, l) view, in f32.

One thread block per row: each of its BLOCK slots accumulates a strided part of the row,
then T.reduce_sum adds the slots (warp shuffles). m and l are run-time sizes, so one
compiled kernel per dtype serves every shape; the Python wrapper moves the reduced dim
last (a contiguous copy when it is not already).
"""

import tilelang.language as T

BLOCK = 1024
THREADS = 256


def program(dtype):
    m, l = T.dynamic("m, l")

    @T.prim_func
    def reduce_sum(src: T.Tensor((m, l), dtype), out: T.Tensor((m,), dtype)):
        with T.Kernel(m, threads=THREADS) as row:
            part = T.alloc_fragment((BLOCK,), "float32")
            total = T.alloc_fragment((1,), "float32")
            T.clear(part)
            for k in T.serial(T.ceildiv(l, BLOCK)):
                for i in T.Parallel(BLOCK):
                    col = k * BLOCK + i
                    part[i] += T.if_then_else(col < l, T.cast(src[row, col], "float32"),
                                              T.float32(0))
            T.reduce_sum(part, total, dim=0)
            out[row] = T.cast(total[0], dtype)

    return reduce_sum
