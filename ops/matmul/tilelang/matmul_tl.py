"""matmul in TileLang: c (m, n) = a (m, k) @ b (k, n), contiguous row-major views, f32 sums.

One thread block per 128 x 128 tile of c. The K loop is software-pipelined (T.Pipelined):
while the block multiplies one 32-deep slice held in shared memory, the copies of the next
slices are in flight. f16 / bf16 multiply on tensor cores (T.gemm, f32 accumulation); f32
keeps full f32 products on CUDA cores (T.gemm would round f32 inputs to TF32): each thread
owns a few of the tile's sums and walks the slice in a plain loop. m, n and k are run-time
sizes (one compiled kernel per dtype); the copies are bounds-checked at the edges. The
Python wrapper makes a and b contiguous (a copy when they are not).
"""

import tilelang.language as T

BLOCK_M = 128
BLOCK_N = 128
BLOCK_K = 32
STAGES = 3
THREADS = 128


def program(dtype):
    m, n, k = T.dynamic("m, n, k")
    tensor_cores = dtype != "float32"
    slice_k = BLOCK_K if tensor_cores else 16  # f32: a smaller slice keeps shared memory at 2 x 16 KB

    @T.prim_func
    def matmul(a: T.Tensor((m, k), dtype), b: T.Tensor((k, n), dtype), c: T.Tensor((m, n), dtype)):
        with T.Kernel(T.ceildiv(n, BLOCK_N), T.ceildiv(m, BLOCK_M), threads=THREADS) as (bx, by):
            a_s = T.alloc_shared((BLOCK_M, slice_k), dtype)
            b_s = T.alloc_shared((slice_k, BLOCK_N), dtype)
            acc = T.alloc_fragment((BLOCK_M, BLOCK_N), "float32")
            T.clear(acc)
            for ko in T.Pipelined(T.ceildiv(k, slice_k), num_stages=STAGES if tensor_cores else 2):
                T.copy(a[by * BLOCK_M, ko * slice_k], a_s)
                T.copy(b[ko * slice_k, bx * BLOCK_N], b_s)
                if tensor_cores:
                    T.gemm(a_s, b_s, acc)
                else:
                    for i, j in T.Parallel(BLOCK_M, BLOCK_N):
                        for p in T.serial(slice_k):
                            acc[i, j] += T.cast(a_s[i, p], "float32") * T.cast(b_s[p, j], "float32")
            T.copy(acc, c[by * BLOCK_M, bx * BLOCK_N])

    return matmul
