// matmul on NVIDIA GPUs: kernel choice at descriptor creation (plan) and launches at
// execute (run). The SIMT kernels are in kernel.cuh; the tensor-core kernels in
// mma_sync.cuh (mma.sync, f16/bf16) and wgmma.cuh (Hopper TMA + WGMMA, sm_90a).
//
// Choice:
//   f16 / bf16: wgmma where wgmma_supports, else mma_sync where mma_sync_supports
//               (see "Tensor cores" below), else the SIMT choice;
//   f32 (no TF32: full f32 products): warp_tiling when A and B are row-major with
//               rows of a multiple of 4 elements (16-byte vector loads), else
//               blocking_2d, which reads any strides. warp_tiling's block tile and
//               K split come from the table in warp_tiling_plan.h (launch slots 0
//               and 1; a split asks for a workspace).
// warp_tiling and vectorized also need A's and B's pointers aligned to 4 elements;
// run() checks them and launches blocking_2d for a call whose pointers are not.
#include <array>
#include <cstdint>
#include <utility>

#include "runtime/gpu/gpu_runtime.h"
#include "ops/matmul/matmul_backends.h"
#include "ops/matmul/nvidia/gemm_args.h"
#include "ops/matmul/nvidia/kernel.cuh"
#include "ops/matmul/nvidia/warp_tiling_plan.h"

// ---- Tensor cores --------------------------------------------------------------------
// The tensor-core families (mma_sync, wgmma) exist on NVIDIA only; the MetaX unit
// (metax/matmul_metax.maca) defines OPRT_MATMUL_NO_TENSOR_CORES and its plan declines
// them with a reason.
#if !defined(OPRT_MATMUL_NO_TENSOR_CORES)
#define OPRT_MATMUL_TENSOR_CORES 1
#include "ops/matmul/nvidia/mma_sync.cuh"
#include "ops/matmul/nvidia/wgmma.cuh"
#else
#define OPRT_MATMUL_TENSOR_CORES 0
#endif

namespace oprt::matmul::OPRT_GPU_BACKEND_NS {
namespace {

using namespace oprt::matmul::gpu_kernels;
using gpu::ceil_div;

constexpr const char *kOp = "oprt_execute_matmul";

// MatmulPlan::kernel values: the ladder's steps in order, then the tensor-core families.
enum Kernel : int32_t {
    kNaive = 1,
    kSmemTiles = 2,
    kBlocking1d = 3,
    kBlocking2d = 4,
    kVectorized = 5,
    kWarpTiling = 6,
    kMmaSync = 7,
    kWgmma = 8,
};

GemmArgs gemm_args(const MatmulPlan &p, const ExecArgs &args) {
    GemmArgs g;
    g.m = p.m, g.n = p.n, g.k = p.k;
    g.a = args.in0, g.a_row = p.a_row, g.a_col = p.a_col;
    g.b = args.in1, g.b_row = p.b_row, g.b_col = p.b_col;
    g.c = args.out, g.c_row = p.c_row, g.c_col = p.c_col;
    return g;
}

// A (rows x cols) operand read as rows of kVec-element vectors: stride 1 along a row
// and rows a whole number of vectors apart (a stride that never moves is no constraint).
bool vector_rows(int64_t rows, int64_t cols, int64_t row_stride, int64_t col_stride) {
    return (cols <= 1 || col_stride == 1) && (rows <= 1 || row_stride % kVec == 0);
}

bool vector_layout(const MatmulPlan &p) {
    return vector_rows(p.m, p.k, p.a_row, p.a_col) && vector_rows(p.k, p.n, p.b_row, p.b_col);
}

bool pointers_aligned(const MatmulPlan &p, const ExecArgs &args) {
    const size_t bytes = size_t(kVec) * (p.dtype == OPRT_DTYPE_F32 ? 4 : 2);
    return gpu::aligned_to(args.in0, bytes) && gpu::aligned_to(args.in1, bytes);
}

// C stored as vectors: dense rows a whole number of vectors apart, aligned.
bool vector_c(const MatmulPlan &p, const ExecArgs &args) {
    const size_t bytes = size_t(kVec) * (p.dtype == OPRT_DTYPE_F32 ? 4 : 2);
    return vector_rows(p.m, p.n, p.c_row, p.c_col) && (p.n <= 1 || p.c_col == 1) && gpu::aligned_to(args.out, bytes);
}

// ---- warp_tiling ------------------------------------------------------------------------
// The kernel of config C of warp_tiling_plan.h, and one launcher per config and type.
template <int C>
using ProductionConfig =
    WarpTiling<kWarpTilingConfigs[C].bm, kWarpTilingConfigs[C].bn, kWarpTilingConfigs[C].bk, kWarpTilingConfigs[C].wm,
               kWarpTilingConfigs[C].wn, kWarpTilingConfigs[C].tm, kWarpTilingConfigs[C].tn,
               kWarpTilingConfigs[C].min_blocks>;

using WarpTilingLauncher = void (*)(const GemmArgs &, bool, int, void *, dev::stream_t);

template <typename T, int... C>
constexpr auto warp_tiling_launchers(std::integer_sequence<int, C...>) {
    return std::array<WarpTilingLauncher, sizeof...(C)>{&launch_warp_tiling<ProductionConfig<C>, T>...};
}

// The choice rides in the plan's launch slots: config, K splits.
WarpTilingChoice warp_tiling_choice(const MatmulPlan &p) {
    WarpTilingChoice c;
    c.config = int(p.launch[0]), c.splits = int(p.launch[1]);
    return c;
}

template <typename T>
void launch_warp_tiling(const MatmulPlan &p, const GemmArgs &g, bool vec_c, void *workspace, dev::stream_t stream) {
    static constexpr auto kLaunchers = warp_tiling_launchers<T>(std::make_integer_sequence<int, kWarpTilingConfigCount>{});
    const WarpTilingChoice c = warp_tiling_choice(p);
    kLaunchers[size_t(c.config)](g, vec_c, c.splits, workspace, stream);
}

#if OPRT_MATMUL_TENSOR_CORES
// The wgmma choice rides in the plan's launch slots: variant, K splits, store, overlap.
void store_choice(MatmulPlan &p, const WgmmaChoice &c) {
    p.launch[0] = c.variant, p.launch[1] = c.splits, p.launch[2] = c.direct_store, p.launch[3] = c.overlapped;
}

WgmmaChoice load_choice(const MatmulPlan &p) {
    WgmmaChoice c;
    c.variant = int(p.launch[0]), c.splits = int(p.launch[1]);
    c.direct_store = p.launch[2] != 0, c.overlapped = p.launch[3] != 0;
    return c;
}
#endif

// The kernel this call runs: the plan's, unless the plan (which saw no pointers) picked one
// that cannot load these operands. Then it steps down: wgmma -> mma_sync (A or B not
// 16-byte aligned) -> blocking_2d, which reads anything; vectorized and warp_tiling ->
// blocking_2d (A or B not aligned to 4 elements).
int32_t kernel_for_call(const MatmulPlan &p, const ExecArgs &args, const GemmArgs &g) {
    int32_t kernel = p.kernel;
#if OPRT_MATMUL_TENSOR_CORES
    if (kernel == kWgmma && !wgmma_supports(g, p.dtype)) kernel = kMmaSync;
    if (kernel == kMmaSync && !mma_sync_supports(g, p.dtype)) kernel = kBlocking2d;
#else
    (void)g;
#endif
    if ((kernel == kVectorized || kernel == kWarpTiling) && !pointers_aligned(p, args)) kernel = kBlocking2d;
    return kernel;
}

template <typename T>
oprt_status_t launch(const MatmulPlan &p, const ExecArgs &args, dev::stream_t stream) {
    const GemmArgs g = gemm_args(p, args);
    const auto tiles = [&](int64_t bm, int64_t bn) { return unsigned(ceil_div(g.m, bm) * ceil_div(g.n, bn)); };
    const int32_t kernel = kernel_for_call(p, args, g);
    switch (kernel) {
    case kNaive:
        matmul_naive_kernel<T><<<tiles(kNaiveTile, kNaiveTile), kNaiveTile * kNaiveTile, 0, stream>>>(g);
        break;
    case kSmemTiles:
        matmul_smem_tiles_kernel<T><<<tiles(kSmemTile, kSmemTile), kSmemTile * kSmemTile, 0, stream>>>(g);
        break;
    case kBlocking1d: matmul_blocking_1d_kernel<T><<<tiles(kBM1, kBN1), kThreads1, 0, stream>>>(g); break;
    case kBlocking2d: matmul_blocking_2d_kernel<T><<<tiles(kBM, kBN), kThreads2, 0, stream>>>(g); break;
    case kVectorized:
        matmul_vectorized_kernel<T><<<tiles(kBM, kBN), kThreads2, 0, stream>>>(g, vector_c(p, args));
        break;
    case kWarpTiling:
        launch_warp_tiling<T>(p, g, vector_c(p, args), args.workspace, stream);
        break;
#if OPRT_MATMUL_TENSOR_CORES
    case kMmaSync: {
        const cudaError_t e = mma_sync_launch(g, p.dtype, stream);
        if (e != cudaSuccess) return gpu::runtime_error(kOp, "mma_sync", int(e));
        break;
    }
    case kWgmma: {
        const cudaError_t e = wgmma_launch(g, p.dtype, load_choice(p), args.workspace, stream);
        if (e != cudaSuccess) return gpu::runtime_error(kOp, "wgmma", int(e));
        break;
    }
#endif
    default: return fail(OPRT_ERR_RUNTIME, "%s: no kernel %d in the NVIDIA matmul backend", kOp, int(kernel));
    }
    return OPRT_SUCCESS;
}

// The plan of a SIMT step, or NOT_SUPPORTED saying why it cannot run this layout.
oprt_status_t plan_simt(MatmulPlan &p, Kernel kernel) {
    static const char *const kNames[] = {"", "naive", "smem_tiles", "blocking_1d", "blocking_2d", "vectorized",
                                         "warp_tiling"};
    // The smallest tile is 16 x 16: the 1-D grid holds every tile of any shape below this.
    if (ceil_div(p.m, kNaiveTile) * ceil_div(p.n, kNaiveTile) > gpu::kMaxGridBlocks)
        return fail(OPRT_ERR_NOT_SUPPORTED, "matmul: %lld x %lld outputs are more tiles than one grid launches",
                    (long long)p.m, (long long)p.n);
    if ((kernel == kVectorized || kernel == kWarpTiling) && !vector_layout(p))
        return fail(OPRT_ERR_NOT_SUPPORTED,
                    "'%s' loads rows of A and B as 4-element vectors: both must be row-major (column stride 1) "
                    "with a row stride that is a multiple of 4 (here a strides (%lld, %lld), b strides (%lld, "
                    "%lld)); use 'naive', 'smem_tiles', 'blocking_1d', 'blocking_2d' or 'auto'",
                    kNames[kernel], (long long)p.a_row, (long long)p.a_col, (long long)p.b_row, (long long)p.b_col);
    p.kernel = kernel;
    p.kernel_name = kNames[kernel];
    p.workspace_bytes = 0;
    if (kernel == kWarpTiling) {
        gpu::DeviceInfo info;
        const oprt_status_t s = gpu::current_device("oprt_create_matmul_descriptor", &info);
        if (s != OPRT_SUCCESS) return s;
        const WarpTilingChoice c = warp_tiling_choose(p.m, p.n, p.k, info.sm_count);
        p.launch[0] = c.config, p.launch[1] = c.splits;
        p.workspace_bytes = split_workspace_bytes(p.m, p.n, p.k, kWarpTilingConfigs[c.config].bk, c.splits);
    }
    return OPRT_SUCCESS;
}

template <Kernel K>
oprt_status_t plan_step(MatmulPlan &p) {
    return plan_simt(p, K);
}

// The tensor-core steps: f16/bf16 only, in the layouts their loads take (the plan sees no
// pointers; run() steps down for a call whose pointers are not 16-byte aligned).
template <Kernel K>
oprt_status_t plan_tensor_cores(MatmulPlan &p) {
    const char *name = K == kWgmma ? "wgmma" : "mma_sync";
#if OPRT_MATMUL_TENSOR_CORES
    if (p.dtype != OPRT_DTYPE_F16 && p.dtype != OPRT_DTYPE_BF16)
        return fail(OPRT_ERR_NOT_SUPPORTED, "'%s' runs f16 and bf16 (tensor cores with f32 sums); f32 takes the "
                                            "SIMT steps (no TF32)", name);
    GemmArgs g;
    g.m = p.m, g.n = p.n, g.k = p.k;
    g.a_row = p.a_row, g.a_col = p.a_col, g.b_row = p.b_row, g.b_col = p.b_col, g.c_row = p.c_row, g.c_col = p.c_col;
    if (K == kWgmma) {
        gpu::DeviceInfo info;
        if (!wgmma_supports(g, p.dtype))
            return fail(OPRT_ERR_NOT_SUPPORTED,
                        "'wgmma' needs a compute capability 9.0 GPU, A contiguous along K, B contiguous along N or "
                        "K, the other strides multiples of 8 values and K >= 1 (here a strides (%lld, %lld), b "
                        "strides (%lld, %lld), k %lld)", (long long)p.a_row, (long long)p.a_col,
                        (long long)p.b_row, (long long)p.b_col, (long long)p.k);
        const oprt_status_t s = gpu::current_device("oprt_create_matmul_descriptor", &info);
        if (s != OPRT_SUCCESS) return s;
        WgmmaChoice c = wgmma_choose(g, info.sm_count);
        c.overlapped = c.overlapped && gpu::overlapped_launch_allowed();
        store_choice(p, c);
        p.workspace_bytes = wgmma_workspace_bytes(g, c);
    } else {
        if (!mma_sync_supports(g, p.dtype))
            return fail(OPRT_ERR_NOT_SUPPORTED,
                        "'mma_sync' needs a compute capability 8.0 GPU, A and B each contiguous along one dim with "
                        "the other stride a multiple of 8 values (here a strides (%lld, %lld), b strides (%lld, "
                        "%lld))", (long long)p.a_row, (long long)p.a_col, (long long)p.b_row, (long long)p.b_col);
        p.workspace_bytes = 0;
    }
    p.kernel = K;
    p.kernel_name = name;
    return OPRT_SUCCESS;
#else
    (void)p;
    return fail(OPRT_ERR_NOT_SUPPORTED, "'%s': the tensor-core kernels are NVIDIA-only", name);
#endif
}

const Variant<MatmulPlan> kLadderSteps[] = {
    {"naive", &plan_step<kNaive>},
    {"smem_tiles", &plan_step<kSmemTiles>},
    {"blocking_1d", &plan_step<kBlocking1d>},
    {"blocking_2d", &plan_step<kBlocking2d>},
    {"vectorized", &plan_step<kVectorized>},
    {"warp_tiling", &plan_step<kWarpTiling>},
    {"mma_sync", &plan_tensor_cores<kMmaSync>},
    {"wgmma", &plan_tensor_cores<kWgmma>},
};

}  // namespace

const VariantList<MatmulPlan> ladder = {kLadderSteps, int(sizeof kLadderSteps / sizeof kLadderSteps[0])};

oprt_status_t plan(MatmulPlan &p) {
#if OPRT_MATMUL_TENSOR_CORES
    if (p.dtype != OPRT_DTYPE_F32) {
        if (plan_tensor_cores<kWgmma>(p) == OPRT_SUCCESS) return OPRT_SUCCESS;
        if (plan_tensor_cores<kMmaSync>(p) == OPRT_SUCCESS) return OPRT_SUCCESS;
        clear_error();
    }
#endif
    return plan_simt(p, vector_layout(p) ? kWarpTiling : kBlocking2d);
}

oprt_status_t run(const MatmulPlan &p, const ExecArgs &args) {
    oprt_status_t s;
    dev::stream_t stream = static_cast<dev::stream_t>(args.stream);
    switch (p.dtype) {
    case OPRT_DTYPE_F32: s = launch<float>(p, args, stream); break;
    case OPRT_DTYPE_F16: s = launch<dev::half_t>(p, args, stream); break;
    case OPRT_DTYPE_BF16: s = launch<dev::bf16_t>(p, args, stream); break;
    default: s = OPRT_ERR_UNSUPPORTED_DTYPE; break;
    }
    if (s != OPRT_SUCCESS) return s;
    return gpu::check_launch(kOp, p.kernel_name);
}

}  // namespace oprt::matmul::OPRT_GPU_BACKEND_NS
