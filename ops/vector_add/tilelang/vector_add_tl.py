"""vector_add in TileLang: out[i] = a[i] + b[i] in f32, rounded once to the storage type,
over contiguous 1-d views of n elements (broadcasting is done by the Python wrapper).

n is a run-time size: one compiled kernel per (dtype, aligned). Full blocks run without
bounds checks and vectorize to 128-bit accesses when every pointer is 16-byte aligned
(aligned=True); the last block checks each index.
"""

import tilelang.language as T

BLOCK = 2048
THREADS = 256


def program(dtype, aligned):
    n = T.dynamic("n")

    @T.prim_func
    def vector_add(a: T.Tensor((n,), dtype), b: T.Tensor((n,), dtype),
                   out: T.Tensor((n,), dtype)):
        with T.Kernel(T.ceildiv(n, BLOCK), threads=THREADS) as bx:
            base = bx * BLOCK
            if aligned and base + BLOCK <= n:
                for i in T.Parallel(BLOCK):
                    out[base + i] = T.cast(
                        T.cast(a[base + i], "float32") + T.cast(b[base + i], "float32"), dtype)
            else:
                for i in T.Parallel(BLOCK):
                    if base + i < n:
                        out[base + i] = T.cast(
                            T.cast(a[base + i], "float32") + T.cast(b[base + i], "float32"),
                            dtype)

    return vector_add
