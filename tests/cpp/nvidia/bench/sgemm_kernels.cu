// The f32 SIMT matmul (warp_tiling, ops/matmul/nvidia/kernel.cuh) against cuBLAS SGEMM:
// correctness and speed of every candidate configuration and K split, run by hand on a GPU.
//
//   camp_sgemm_bench [--check-only] [--quick] [--small] [--big] [--large] [--shallow] [--list]
//
// cuBLAS: cublasSgemm with CUBLAS_DEFAULT_MATH (full f32 products, no TF32), the reference
// and the peer. Shapes (M x N x K): 2048^3, 4096^3 (and 8192^3 with --big), skinny
// 16|64|128 x 4096 x 4096, and odd sizes (no dimension a multiple of any tile). A and B are
// row-major with leading dimensions rounded up to 4 (what the kernel's vector loads need);
// the padding holds NaN, so a kernel reading outside its matrix fails. C is NaN-poisoned
// before each run, the split-K workspace too.
//
// Candidates: every configuration below (the library's, from warp_tiling_plan.h, then
// extra ones; tiles under 64 rows only where M < 1024) with each K split that can help (the
// blocks stay under 4 waves of the SMs; each piece at least 2 slices deep); "plan" is what
// the library's table picks. Each is
// checked against cuBLAS (and, on odd shapes, against a float64 GPU reference): error =
// max over elements of |x - ref| / max(|ref|, rms), rms = sqrt(K) / 3 (inputs uniform in
// [-1, 1]), must be below 1e-4. Then it is timed as cuBLAS is: a CUDA graph of 20 launches
// replayed 7 times, the median (graph_timing.cuh). Per shape the program prints the
// fastest candidate and the plan's pick, and at the end a summary with, for each winner
// that is not a library configuration, the line to paste into kWarpTilingConfigs.
//
// --check-only: no timing, and only the odd and small shapes (for compute-sanitizer).
// --quick: 4096^3, 128x4096x4096 and the odd shapes. --small: the small products only
// (33x65x17 and 130x260x1000, which the plan gives the 32 x 64 tile, and the shapes at
// its M x N bound of 2^16 on both sides; well under a minute). --large: the library's and the
// extra configs on the large, skinny and odd shapes the plan's large rows were set on.
// --shallow: the library's configs with every K split on the mid-size and shallow-K
// products the plan's smaller rows, the yield rule and the split floor were set on.
// --list: the candidates.
#include <cublas_v2.h>
#include <cuda_runtime.h>

#include <array>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <string>
#include <utility>
#include <vector>

#include "ops/matmul/nvidia/kernel.cuh"
#include "ops/matmul/nvidia/warp_tiling_plan.h"
#include "tests/cpp/nvidia/bench/gemm_check.cuh"
#include "tests/cpp/nvidia/bench/graph_timing.cuh"

namespace {

using namespace gemm_check;

using oprt::matmul::GemmArgs;
using oprt::matmul::kWarpTilingConfigCount;
using oprt::matmul::kWarpTilingConfigs;
using oprt::matmul::WarpTilingShape;
namespace gk = oprt::matmul::gpu_kernels;

// Configurations tried besides the library's (BM, BN, BK, WM, WN, TM, TN, blocks per SM).
constexpr WarpTilingShape kExtra[] = {
    {128, 256, 8, 64, 64, 8, 16, 1},   // 256 threads, 8 x 16 a lane, one block an SM
    {256, 128, 8, 64, 64, 16, 8, 1},   // 256 threads, 16 x 8 a lane, one block an SM
    {128, 128, 8, 64, 32, 8, 8, 2},    // 256 threads, 8 x 8 a lane, two blocks an SM
    {128, 128, 8, 64, 64, 8, 16, 2},   // 128 threads, 8 x 16 a lane, two blocks an SM
    {128, 64, 8, 64, 32, 8, 8, 3},
    {64, 128, 16, 64, 32, 8, 8, 3},    // 64 rows, 16-deep slices
    {64, 256, 8, 64, 64, 8, 16, 2},    // 64 rows, 8 x 16 a lane
    {64, 64, 16, 32, 32, 4, 8, 4},
    {16, 256, 16, 16, 64, 4, 8, 3},
};
constexpr int kExtraCount = int(sizeof(kExtra) / sizeof(kExtra[0]));
constexpr int kCandidates = kWarpTilingConfigCount + kExtraCount;

constexpr WarpTilingShape candidate(int i) {
    return i < kWarpTilingConfigCount ? kWarpTilingConfigs[i] : kExtra[i - kWarpTilingConfigCount];
}
template <int I>
using Cfg = gk::WarpTiling<candidate(I).bm, candidate(I).bn, candidate(I).bk, candidate(I).wm, candidate(I).wn,
                           candidate(I).tm, candidate(I).tn, candidate(I).min_blocks>;

using Launcher = void (*)(const GemmArgs &, bool, int, void *, cudaStream_t);
template <int I>
constexpr Launcher launcher() {
    return &gk::launch_warp_tiling<Cfg<I>, float>;
}
template <int I>
const void *kernel_of() {
    return reinterpret_cast<const void *>(&gk::matmul_warp_tiling_kernel<Cfg<I>, float>);
}
template <int... I>
constexpr std::array<Launcher, sizeof...(I)> launchers(std::integer_sequence<int, I...>) {
    return {launcher<I>()...};
}
constexpr auto kLaunchers = launchers(std::make_integer_sequence<int, kCandidates>{});
template <int... I>
std::array<const void *, sizeof...(I)> kernels(std::integer_sequence<int, I...>) {
    return {kernel_of<I>()...};
}

std::string name(const WarpTilingShape &s) {
    char buf[96];
    std::snprintf(buf, sizeof buf, "%dx%dx%d/w%dx%d/t%dx%d/b%d", s.bm, s.bn, s.bk, s.wm, s.wn, s.tm, s.tn, s.min_blocks);
    return buf;
}
std::string name(int i) { return name(candidate(i)); }
std::string line(const WarpTilingShape &s) {
    char buf[96];
    std::snprintf(buf, sizeof buf, "{%d, %d, %d, %d, %d, %d, %d, %d}", s.bm, s.bn, s.bk, s.wm, s.wn, s.tm, s.tn,
                  s.min_blocks);
    return buf;
}
int threads(const WarpTilingShape &s) { return (s.bm / s.wm) * (s.bn / s.wn) * 32; }

bool g_timing = true;
int g_sms = 1;
// --large: the library's and the extra configs on the --large shapes. --shallow: the
// library's configs only, every split on odd shapes too.
bool g_large = false, g_shallow = false;
std::array<bool, kCandidates> g_dead{};  // configs whose launch failed

// C[i][j] summed in float64, one thread each.
__global__ void reference64(GemmArgs g, double *ref) {
    const int64_t i = blockIdx.y * int64_t(blockDim.y) + threadIdx.y, j = blockIdx.x * int64_t(blockDim.x) + threadIdx.x;
    if (i >= g.m || j >= g.n) return;
    const float *a = static_cast<const float *>(g.a), *b = static_cast<const float *>(g.b);
    double s = 0;
    for (int64_t p = 0; p < g.k; ++p) s += double(a[i * g.a_row + p]) * double(b[p * g.b_row + j]);
    ref[i * g.n + j] = s;
}

struct Shape {
    int64_t m, n, k;
    bool odd;  // also checked against the float64 reference; splits 1 and 3 only
};

struct Totals {
    int pass = 0, fail = 0;
};

struct Best {  // one shape's summary line
    std::string shape;
    double blas_us = 0, best_us = 0, plan_us = 0;
    std::string best, plan;
    int best_config = -1;
};

int64_t round4(int64_t x) { return (x + 3) / 4 * 4; }

void run_shape(const Shape &sh, cublasHandle_t handle, cudaStream_t stream, unsigned *stats, Totals &totals,
               std::vector<Best> &summary) {
    const double tol = 1e-4;
    GemmArgs g;
    g.m = sh.m, g.n = sh.n, g.k = sh.k;
    const int64_t lda = round4(sh.k), ldb = round4(sh.n);
    g.a_row = lda, g.a_col = 1, g.b_row = ldb, g.b_col = 1, g.c_row = sh.n, g.c_col = 1;
    float *a = nullptr, *b = nullptr, *c = nullptr, *c_blas = nullptr;
    double *ref = nullptr;
    CK(cudaMalloc(&a, sh.m * lda * sizeof(float)));
    CK(cudaMalloc(&b, sh.k * ldb * sizeof(float)));
    CK(cudaMalloc(&c, sh.m * sh.n * sizeof(float)));
    CK(cudaMalloc(&c_blas, sh.m * sh.n * sizeof(float)));
    fill<<<1024, 256, 0, stream>>>(a, sh.m, sh.k, lda, 1);
    fill<<<1024, 256, 0, stream>>>(b, sh.k, sh.n, ldb, 2);
    CK(cudaGetLastError());
    g.a = a, g.b = b;
    const float floor = float(std::sqrt(double(sh.k)) / 3.0);
    const double flops = 2.0 * double(sh.m) * double(sh.n) * double(sh.k);
    char shape[64];
    std::snprintf(shape, sizeof shape, "%lldx%lldx%lld", (long long)sh.m, (long long)sh.n, (long long)sh.k);

    auto error_vs = [&](const float *x, bool vs_ref64) {
        return vs_ref64 ? max_error(x, ref, sh.m * sh.n, floor, stats, stream)
                        : max_error(x, c_blas, sh.m * sh.n, floor, stats, stream);
    };
    auto seconds = [&](auto launch) { return g_timing ? graph_seconds_per_launch(launch, stream) : double(NAN); };

    // cuBLAS is column-major: C^T (N x M) = B^T A^T, and a row-major buffer read
    // column-major is the transpose, so the operands go in untransposed, B first.
    const float one = 1.f, zero = 0.f;
    auto blas = [&] {
        return cublasSgemm(handle, CUBLAS_OP_N, CUBLAS_OP_N, int(sh.n), int(sh.m), int(sh.k), &one, b, int(ldb), a,
                           int(lda), &zero, c_blas, int(sh.n));
    };
    CK(cudaMemsetAsync(c_blas, 0xFF, sh.m * sh.n * sizeof(float), stream));
    if (blas() != CUBLAS_STATUS_SUCCESS) {
        std::printf("%s cublasSgemm failed\n", shape);
        std::exit(1);
    }
    CK(cudaStreamSynchronize(stream));
    double blas_err = 0;
    if (sh.odd) {
        CK(cudaMalloc(&ref, sh.m * sh.n * sizeof(double)));
        const dim3 block(32, 8), grid(unsigned((sh.n + 31) / 32), unsigned((sh.m + 7) / 8));
        reference64<<<grid, block, 0, stream>>>(g, ref);
        CK(cudaGetLastError());
        blas_err = error_vs(c_blas, true);
    }
    const double blas_s = seconds([&] { blas(); });
    std::printf("%-16s %-36s %9.1f us %7.2f TFLOPS %6.1f%% %9.2e %s\n", shape, "cublas", blas_s * 1e6,
                flops / blas_s * 1e-12, 100.0, blas_err,
                sh.odd ? (blas_err <= tol ? "PASS(vs f64)" : "FAIL(vs f64)") : "reference");
    if (sh.odd && !(blas_err <= tol)) ++totals.fail;

    struct Run {
        std::string name;
        int config;  // candidate index
        int splits;
        bool plan;  // the library's plan
    };
    std::vector<Run> runs;
    const oprt::matmul::WarpTilingChoice pick = oprt::matmul::warp_tiling_choose(sh.m, sh.n, sh.k, g_sms);
    runs.push_back({"plan", pick.config, pick.splits, true});
    for (int i = 0; i < kCandidates; ++i) {
        if (g_shallow && i >= kWarpTilingConfigCount) continue;
        const WarpTilingShape s = candidate(i);
        const int64_t tiles = ((sh.m + s.bm - 1) / s.bm) * ((sh.n + s.bn - 1) / s.bn);
        if (!sh.odd && sh.m >= 1024 && s.bm < 64) continue;  // small-M tiles on large products: time better spent
        for (int splits : {1, 2, 3, 4, 6, 8, 12, 16}) {
            if (sh.odd && !g_shallow ? (splits != 1 && splits != 3)
                                     : splits > 1 && (tiles * splits > 4 * int64_t(g_sms) || sh.k / splits < 2 * s.bk))
                continue;
            runs.push_back({name(i), i, splits, false});
        }
    }

    Best best;
    best.shape = shape;
    best.blas_us = blas_s * 1e6;
    for (const Run &run : runs) {
        if (g_dead[size_t(run.config)]) continue;
        const WarpTilingShape s = candidate(run.config);
        const size_t ws_bytes = gk::split_workspace_bytes(sh.m, sh.n, sh.k, s.bk, run.splits);
        const gk::SplitShape split = gk::split_shape(sh.k, s.bk, run.splits);
        void *ws = workspace(ws_bytes);
        GemmArgs gc = g;
        gc.c = c;
        const bool vec_c = sh.n % 4 == 0;  // C dense: rows 16-byte aligned when N is a multiple of 4
        auto launch = [&] { kLaunchers[size_t(run.config)](gc, vec_c, run.splits, ws, stream); };
        CK(cudaMemsetAsync(c, 0xFF, sh.m * sh.n * sizeof(float), stream));  // NaN everywhere
        if (ws_bytes) CK(cudaMemsetAsync(ws, 0xFF, ws_bytes, stream));
        launch();
        cudaError_t e = cudaGetLastError();
        if (e == cudaSuccess) e = cudaStreamSynchronize(stream);
        const std::string label = (run.plan ? run.name + ":" + name(s) : run.name) + "/s" + std::to_string(split.pieces);
        if (e != cudaSuccess) {  // a launch error leaves the context usable: skip this config from now on
            std::printf("%-16s %-36s ERROR %s: its remaining runs are skipped\n", shape, label.c_str(),
                        cudaGetErrorString(e));
            ++totals.fail;
            g_dead[size_t(run.config)] = true;
            if (!context_alive()) {
                std::printf("summary: the CUDA context is broken; stopping. pass %d fail %d\n", totals.pass,
                            totals.fail);
                std::exit(2);
            }
            continue;
        }
        double err = error_vs(c, false);
        if (sh.odd) {
            const double e64 = error_vs(c, true);
            err = std::isnan(err) || std::isnan(e64) ? double(NAN) : std::fmax(err, e64);
        }
        const bool pass = std::isfinite(err) && err <= tol;
        const double sec = seconds(launch);
        std::printf("%-16s %-36s %9.1f us %7.2f TFLOPS %6.1f%% %9.2e %s\n", shape, label.c_str(), sec * 1e6,
                    flops / sec * 1e-12, 100.0 * blas_s / sec, err, pass ? "PASS" : "FAIL");
        std::fflush(stdout);
        ++(pass ? totals.pass : totals.fail);
        if (g_timing && run.name == "plan" && split.pieces > 1) {
            // The plan's second kernel alone (the slabs it reads are those just written): what
            // the K split costs besides the main kernel.
            gk::SplitK sk;
            sk.k_piece = split.k_piece;
            sk.partial = reinterpret_cast<float *>((reinterpret_cast<uintptr_t>(ws) + 15) / 16 * 16);
            sk.ldp = round4(sh.n);
            const int64_t quads = sh.m * (sk.ldp / 4), blocks = (quads + 255) / 256;
            const double sum_s = seconds([&] {
                gk::matmul_splitk_sum_kernel<float>
                    <<<unsigned(blocks < 4096 ? blocks : 4096), 256, 0, stream>>>(gc, vec_c, sk, split.pieces);
            });
            std::printf("%-16s %-36s %9.1f us (%.1f%% of the plan's time)\n", shape, "plan's splitk_sum alone",
                        sum_s * 1e6, 100.0 * sum_s / sec);
        }
        if (run.plan) {
            best.plan = label.substr(run.name.size() + 1), best.plan_us = sec * 1e6;
        } else if (pass && (best.best.empty() || sec * 1e6 < best.best_us)) {
            best.best = label, best.best_us = sec * 1e6, best.best_config = run.config;
        }
    }
    if (g_timing && !best.best.empty()) {
        std::printf("%-16s best %s %.1f us = %.1f%% of cuBLAS; the plan picks %s %.1f us = %.1f%%\n", shape,
                    best.best.c_str(), best.best_us, 100.0 * best.blas_us / best.best_us, best.plan.c_str(),
                    best.plan_us, 100.0 * best.blas_us / best.plan_us);
        summary.push_back(best);
    }
    CK(cudaFree(a));
    CK(cudaFree(b));
    CK(cudaFree(c));
    CK(cudaFree(c_blas));
    if (ref) CK(cudaFree(ref));
    std::fflush(stdout);
}

}  // namespace

int main(int argc, char **argv) {
    bool quick = false, small = false, big = false;
    for (int i = 1; i < argc; ++i) {
        if (std::strcmp(argv[i], "--check-only") == 0) g_timing = false;
        else if (std::strcmp(argv[i], "--quick") == 0) quick = true;
        else if (std::strcmp(argv[i], "--small") == 0) small = true;
        else if (std::strcmp(argv[i], "--big") == 0) big = true;
        else if (std::strcmp(argv[i], "--large") == 0) g_large = true;
        else if (std::strcmp(argv[i], "--shallow") == 0) g_shallow = true;
        else if (std::strcmp(argv[i], "--list") == 0) {
            for (int c = 0; c < kCandidates; ++c)
                std::printf("%-30s %3d threads %s%s\n", name(c).c_str(), threads(candidate(c)),
                            line(candidate(c)).c_str(), c < kWarpTilingConfigCount ? "  (library)" : "");
            return 0;
        } else {
            std::printf("usage: %s [--check-only] [--quick] [--small] [--big] [--large] [--shallow] [--list]\n", argv[0]);
            return 1;
        }
    }
    int devices = 0;
    if (cudaGetDeviceCount(&devices) != cudaSuccess || devices == 0) {
        std::printf("skipped: no CUDA device visible\n");
        return 0;
    }
    cudaDeviceProp prop;
    CK(cudaGetDeviceProperties(&prop, 0));
    std::printf("device: %s (compute capability %d.%d, %d SMs)\n", prop.name, prop.major, prop.minor,
                prop.multiProcessorCount);
    g_sms = prop.multiProcessorCount;
    // What each candidate compiled to: registers, spills (local memory), shared memory, and
    // the blocks that fit on one SM.
    const auto fns = kernels(std::make_integer_sequence<int, kCandidates>{});
    for (int c = 0; c < kCandidates; ++c) {
        cudaFuncAttributes attr;
        CK(cudaFuncGetAttributes(&attr, fns[size_t(c)]));
        int blocks = 0;
        CK(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&blocks, fns[size_t(c)], threads(candidate(c)), 0));
        std::printf("config %-30s %3d threads %3d registers %4zu B local %6zu B smem %d blocks/SM%s\n",
                    name(c).c_str(), threads(candidate(c)), attr.numRegs, attr.localSizeBytes,
                    attr.sharedSizeBytes, blocks, c < kWarpTilingConfigCount ? " (library)" : "");
    }

    const std::vector<Shape> odd = {{33, 65, 17, true},      {1000, 1001, 999, true}, {4097, 4095, 4099, true},
                                    {17, 4099, 4093, true},  {130, 260, 1000, true}};
    std::vector<Shape> shapes;
    if (!g_timing) {
        shapes = {{64, 1024, 1024, false}, {16, 2048, 2048, false}, {256, 256, 256, false}};
        for (const Shape &s : odd)
            if (s.m * s.n * s.k < int64_t(1) << 31) shapes.push_back(s);
    } else if (g_shallow) {
        // Mid-size and shallow-K products: where a big tile leaves SMs idle (512^3,
        // 1024 x 1024 x 256, 257 x 256 x 256), where the split floor and cap decide (256^3,
        // 64 x 1024 x 1024, 256 x 256 x 1024), and row borders (64 x 2048 / 2049 x 1024).
        shapes = {{256, 256, 256, false},   {512, 512, 512, false},     {1024, 1024, 1024, false},
                  {64, 1024, 1024, false},  {64, 2048, 1024, false},    {32, 2048, 2048, false},
                  {130, 260, 1000, true},   {1000, 1001, 999, true},    {64, 4096, 4096, false},
                  {128, 4096, 4096, false}, {1024, 1024, 256, false},   {32, 4096, 2048, false},
                  {256, 256, 1024, false},  {257, 256, 256, false},     {64, 2049, 1024, false},
                  {17, 4099, 4093, true}};
    } else if (g_large) {
        // Large and skinny products, and odd shapes: 1001 x 1003 x 1024 runs both K loops
        // (K whole slices: the inner tiles are unchecked), the other two only the checked
        // one (K not a multiple of BK).
        shapes = {{4096, 4096, 4096, false}, {2048, 2048, 2048, false}, {1024, 1024, 1024, false},
                  {64, 4096, 4096, false},   {128, 4096, 4096, false},  {1001, 1003, 1024, true},
                  {17, 4099, 4093, true},    {130, 260, 1000, true}};
    } else if (small) {
        // The plan's small-product row (M x N <= 2^16) and the rows it borders: 32 and 64
        // rows at the bound (the 32 x 64 tile) and past it (the 32- and 64-row tiles).
        shapes = {{33, 65, 17, true},         {130, 260, 1000, true},     {256, 256, 256, false},
                  {32, 2048, 2048, false},    {32, 4096, 2048, false},    {64, 1024, 1024, false},
                  {64, 2048, 1024, false}};
    } else {
        if (quick) shapes = {{4096, 4096, 4096, false}, {128, 4096, 4096, false}};
        else shapes = {{4096, 4096, 4096, false}, {2048, 2048, 2048, false}, {16, 4096, 4096, false},
                       {64, 4096, 4096, false},   {128, 4096, 4096, false},  {1024, 1024, 1024, false}};
        if (big) shapes.push_back({8192, 8192, 8192, false});
        shapes.insert(shapes.end(), odd.begin(), odd.end());
    }

    cublasHandle_t handle;
    cudaStream_t stream;
    CK(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking));
    if (cublasCreate(&handle) != CUBLAS_STATUS_SUCCESS || cublasSetStream(handle, stream) != CUBLAS_STATUS_SUCCESS ||
        cublasSetMathMode(handle, CUBLAS_DEFAULT_MATH) != CUBLAS_STATUS_SUCCESS) {
        std::printf("cublas setup failed\n");
        return 1;
    }
    unsigned *stats = nullptr;
    CK(cudaMalloc(&stats, 2 * sizeof(unsigned)));
    std::printf("%-16s %-36s %12s %14s %7s %9s %s\n", "MxNxK", "kernel (config/splits)", "time", "rate", "cuBLAS",
                "max_err", "check");
    Totals totals;
    std::vector<Best> summary;
    for (const Shape &s : shapes) run_shape(s, handle, stream, stats, totals, summary);

    if (!summary.empty()) {
        std::printf("\n%-16s %10s %-34s %10s %7s %-34s %10s %7s\n", "MxNxK", "cuBLAS us", "best", "us", "%cuBLAS",
                    "plan", "us", "%cuBLAS");
        for (const Best &b : summary)
            std::printf("%-16s %10.1f %-34s %10.1f %6.1f%% %-34s %10.1f %6.1f%%\n", b.shape.c_str(), b.blas_us,
                        b.best.c_str(), b.best_us, 100.0 * b.blas_us / b.best_us, b.plan.c_str(), b.plan_us,
                        100.0 * b.blas_us / b.plan_us);
        std::printf("\nwinners not in the library (paste into kWarpTilingConfigs, warp_tiling_plan.h):\n");
        std::vector<int> shown;
        for (const Best &b : summary)
            if (b.best_config >= kWarpTilingConfigCount) {
                bool seen = false;
                for (int c : shown) seen = seen || c == b.best_config;
                if (!seen)
                    std::printf("    %s,  // best at %s\n", line(candidate(b.best_config)).c_str(), b.shape.c_str());
                shown.push_back(b.best_config);
            }
    }
    CK(cudaFree(stats));
    cublasDestroy(handle);
    CK(cudaStreamDestroy(stream));
    std::printf("summary: pass %d fail %d\n", totals.pass, totals.fail);
    return totals.fail == 0 ? 0 : 1;
}
