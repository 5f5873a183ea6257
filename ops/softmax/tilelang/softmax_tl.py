"""softmax in TileLang over the rows of a contiguous (m, l) view, in f32.

One thread block per row, three passes over it: the row max, the sum of exp(x - max),
then out = exp(x - max) / sum. An all -inf row gives max = -inf and exp(NaN) = NaN
everywhere, a NaN anywhere makes the sum NaN: both NaN rows, as in PyTorch. m and l
are run-time sizes (one compiled kernel per dtype); the Python wrapper moves the
softmax dim last (a contiguous copy when it is not already).
"""

import tilelang.language as T

BLOCK = 1024
THREADS = 256


def program(dtype):
    m, l = T.dynamic("m, l")

    @T.prim_func
    def softmax(src: T.Tensor((m, l), dtype), out: T.Tensor((m, l), dtype)):
        with T.Kernel(m, threads=THREADS) as row:
            part = T.alloc_fragment((BLOCK,), "float32")
            row_max = T.alloc_fragment((1,), "float32")
            row_sum = T.alloc_fragment((1,), "float32")
            T.fill(part, -T.infinity("float32"))
            for k in T.serial(T.ceildiv(l, BLOCK)):
                for i in T.Parallel(BLOCK):
                    col = k * BLOCK + i
                    part[i] = T.max(part[i], T.if_then_else(
                        col < l, T.cast(src[row, col], "float32"), -T.infinity("float32")))
            T.reduce_max(part, row_max, dim=0)
            T.clear(part)
            for k in T.serial(T.ceildiv(l, BLOCK)):
                for i in T.Parallel(BLOCK):
                    col = k * BLOCK + i
                    part[i] += T.if_then_else(
                        col < l, T.exp(T.cast(src[row, col], "float32") - row_max[0]),
                        T.float32(0))
            T.reduce_sum(part, row_sum, dim=0)
            for k in T.serial(T.ceildiv(l, BLOCK)):
                for i in T.Parallel(BLOCK):
                    col = k * BLOCK + i
                    if col < l:
                        out[row, col] = T.cast(
                            T.exp(T.cast(src[row, col], "float32") - row_max[0]) / row_sum[0],
                            dtype)

    return softmax
