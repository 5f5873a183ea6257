"""matmul in TileLang: c (m, n) = a (m, k) @ b (k, n), contiguous row-major views, f32 sums.

One thread block per tile of c. The K loop is software-pipelined (T.Pipelined): while the
block multiplies one slice of K held in shared memory, the copies of the next slices are
in flight. f16 / bf16 multiply on tensor cores (T.gemm, f32 accumulation; on Hopper two
warpgroups each issue wgmma for 64 rows of a 128 x 256 tile); f32 keeps full f32 products
on CUDA cores (T.gemm would round f32 inputs to TF32): each thread owns a few of the
tile's sums and walks the slice in a plain loop. m, n and k are run-time sizes (one
compiled kernel per dtype); tiles past the edges of c are loaded as zeros and not stored.

On Hopper TileLang turns the global -> shared copies into TMA copies, whose descriptors
need 16-byte aligned addresses and rows a multiple of 16 bytes long: the Python wrapper
gives this kernel contiguous operands padded to such rows where they are not.
"""

import tilelang.language as T

# Per family: the tile of c (rows, columns), the K slice, pipeline stages, threads.
TENSOR_CORES = dict(block_m=128, block_n=256, block_k=64, stages=3, threads=256)
CUDA_CORES = dict(block_m=128, block_n=128, block_k=16, stages=2, threads=128)


def program(dtype):
    m, n, k = T.dynamic("m, n, k")
    tensor_cores = dtype != "float32"
    cfg = TENSOR_CORES if tensor_cores else CUDA_CORES
    bm, bn, bk = cfg["block_m"], cfg["block_n"], cfg["block_k"]

    @T.prim_func
    def matmul(a: T.Tensor((m, k), dtype), b: T.Tensor((k, n), dtype), c: T.Tensor((m, n), dtype)):
        with T.Kernel(T.ceildiv(n, bn), T.ceildiv(m, bm), threads=cfg["threads"]) as (bx, by):
            a_s = T.alloc_shared((bm, bk), dtype)
            b_s = T.alloc_shared((bk, bn), dtype)
            acc = T.alloc_fragment((bm, bn), "float32")
            T.clear(acc)
            for ko in T.Pipelined(T.ceildiv(k, bk), num_stages=cfg["stages"]):
                T.copy(a[by * bm, ko * bk], a_s)
                T.copy(b[ko * bk, bx * bn], b_s)
                if tensor_cores:
                    T.gemm(a_s, b_s, acc)
                else:
                    for i, j in T.Parallel(bm, bn):
                        for p in T.serial(bk):
                            acc[i, j] += T.cast(a_s[i, p], "float32") * T.cast(b_s[p, j], "float32")
            T.copy(acc, c[by * bm, bx * bn])

    return matmul
