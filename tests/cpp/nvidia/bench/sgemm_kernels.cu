// The f32 SIMT matmul (warp_tiling, ops/matmul/nvidia/kernel.cuh) against cuBLAS SGEMM:
// correctness and speed of every candidate configuration and K split, run by hand on a GPU.
//
//   camp_sgemm_bench [--check-only] [--quick] [--big] [--library] [--in-process] [--only I] [--list]
//
// cuBLAS: cublasSgemm with CUBLAS_DEFAULT_MATH (full f32 products, no TF32), the reference
// and the peer. Shapes (M x N x K): 4096^3, 2048^3, 1024^3 (and 8192^3 with --big), skinny
// 16|64|128 x 4096 x 4096, and odd sizes (no dimension a multiple of any tile). A and B are
// row-major with leading dimensions rounded up to 4 (what the kernel's vector loads need);
// the padding holds NaN, so a kernel reading outside its matrix fails. C is NaN-poisoned
// before each run, the split-K workspace too.
//
// Candidates: every configuration below (the library's, from warp_tiling_plan.h, then
// extra ones; tiles under 64 rows only where M < 1024) with each K split that can help (the
// blocks stay under 4 waves of the SMs; each piece at least 2 slices deep), the pieces
// summed either through workspace slabs and a second kernel (label /sN) or in a
// thread-block cluster (/sNc, sm_90, at most 16 pieces); "plan" is what the library's
// table picks. Each is checked against cuBLAS (and, on odd shapes, against a float64 GPU
// reference): error = max over elements of |x - ref| / max(|ref|, rms), rms = sqrt(K) / 3
// (inputs uniform in [-1, 1]), must be below 1e-4. Then it is timed as cuBLAS is: a CUDA
// graph of 20 launches replayed 7 times, the median (graph_timing.cuh). Per shape the
// program prints the fastest candidate and the plan's pick, and at the end a summary with,
// for each winner that is not a library configuration, the line to paste into
// kWarpTilingConfigs.
//
// The timed sweep runs each shape in a process of its own (this program again, with
// --only I): a kernel that faults breaks only that process's CUDA context, and the other
// shapes still run; the summary comes at the end. --in-process: all in this process.
//
// --check-only: no timing, and only the odd and small shapes, K split into 1, 3, 8 and 16
// pieces (for compute-sanitizer), in this process. --library: the library's configs only. --quick: 4096^3, 64 and 128 x 4096 x 4096 and the odd shapes.
// --list: the candidates.
#include <cublas_v2.h>
#include <cuda_runtime.h>

#include <array>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <utility>
#include <vector>

#include <unistd.h>

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

// Configurations tried besides the library's (BM, BN, BK, WM, WN, TM, TN, blocks per SM,
// stages: 0 = next slice through registers, S = a ring of S buffers filled by cp.async).
constexpr WarpTilingShape kExtra[] = {
    // register form
    {128, 256, 16, 64, 64, 8, 16, 1, 0},  // the large tile, 16-deep slices
    {256, 128, 8, 64, 64, 16, 8, 1, 0},
    {128, 128, 8, 64, 32, 8, 8, 2, 0},    // 256 threads, 8 x 8 a lane, two blocks an SM
    {128, 128, 8, 64, 64, 8, 16, 2, 0},   // 128 threads, 64 x 64 warp tiles
    {128, 64, 8, 64, 32, 8, 8, 3, 0},
    {64, 128, 8, 64, 32, 8, 8, 3, 0},
    {64, 64, 16, 32, 32, 4, 8, 4, 0},
    {16, 256, 16, 16, 64, 4, 8, 3, 0},
    // cp.async rings
    {128, 256, 8, 64, 64, 8, 16, 1, 3},
    {128, 256, 8, 64, 64, 8, 16, 1, 4},
    {128, 256, 16, 64, 64, 8, 16, 1, 2},
    {128, 256, 16, 64, 64, 8, 16, 1, 3},  // 72 KB of buffers
    {128, 256, 8, 64, 64, 8, 16, 1, 6},   // 72 KB
    {128, 256, 8, 64, 64, 16, 8, 1, 4},   // lanes 4 x 8
    {256, 128, 8, 64, 64, 16, 8, 1, 3},
    {256, 128, 8, 64, 64, 16, 8, 1, 4},
    {256, 128, 8, 64, 64, 8, 16, 1, 4},   // lanes 8 x 4
    {256, 128, 16, 64, 64, 16, 8, 1, 3},  // 72 KB
    {128, 128, 8, 64, 32, 8, 8, 2, 3},
    {128, 128, 8, 64, 32, 8, 8, 2, 4},
    {128, 128, 8, 32, 64, 8, 8, 2, 3},
    {128, 128, 8, 64, 64, 8, 16, 2, 3},
    {64, 128, 8, 64, 32, 8, 8, 3, 4},
    {64, 128, 16, 64, 32, 8, 8, 3, 3},
    {32, 128, 16, 32, 32, 4, 8, 4, 3},
    {16, 128, 16, 16, 32, 4, 4, 4, 3},
    {32, 64, 16, 32, 16, 4, 4, 4, 3},
};
constexpr int kExtraCount = int(sizeof(kExtra) / sizeof(kExtra[0]));
constexpr int kCandidates = kWarpTilingConfigCount + kExtraCount;

constexpr WarpTilingShape candidate(int i) {
    return i < kWarpTilingConfigCount ? kWarpTilingConfigs[i] : kExtra[i - kWarpTilingConfigCount];
}
template <int I>
using Cfg = gk::WarpTiling<candidate(I).bm, candidate(I).bn, candidate(I).bk, candidate(I).wm, candidate(I).wn,
                           candidate(I).tm, candidate(I).tn, candidate(I).min_blocks, candidate(I).stages>;

// Per candidate: the slab-form launcher, the cluster-form launcher, both kernels, and the
// cluster form's shared memory.
using Launcher = void (*)(const GemmArgs &, bool, int, void *, cudaStream_t);
using ClusterLauncher = cudaError_t (*)(const GemmArgs &, bool, int, cudaStream_t);
struct Candidate {
    Launcher launch;
    ClusterLauncher launch_cluster;
    const void *kernel, *cluster_kernel;
    size_t cluster_smem;
};
template <int... I>
std::array<Candidate, sizeof...(I)> candidates(std::integer_sequence<int, I...>) {
    return {Candidate{&gk::launch_warp_tiling<Cfg<I>, float>, &gk::launch_warp_tiling_cluster<Cfg<I>, float>,
                      reinterpret_cast<const void *>(&gk::matmul_warp_tiling_kernel<Cfg<I>, float, false>),
                      gk::warp_tiling_cluster_kernel<Cfg<I>, float>(), Cfg<I>::smem_bytes(true)}...};
}
const auto kRuns = candidates(std::make_integer_sequence<int, kCandidates>{});

std::string name(const WarpTilingShape &s) {
    char buf[96];
    std::snprintf(buf, sizeof buf, "%dx%dx%d/w%dx%d/t%dx%d/b%d%s", s.bm, s.bn, s.bk, s.wm, s.wn, s.tm, s.tn,
                  s.min_blocks, s.stages ? ("/a" + std::to_string(s.stages)).c_str() : "");
    return buf;
}
std::string line(const WarpTilingShape &s) {
    char buf[96];
    std::snprintf(buf, sizeof buf, "{%d, %d, %d, %d, %d, %d, %d, %d, %d}", s.bm, s.bn, s.bk, s.wm, s.wn, s.tm, s.tn,
                  s.min_blocks, s.stages);
    return buf;
}
int threads(const WarpTilingShape &s) { return (s.bm / s.wm) * (s.bn / s.wn) * 32; }

bool g_timing = true;
bool g_library_only = false;  // --library: the library's configs only
int g_sms = 1;
bool g_clusters = false;                          // compute capability 9.0 or newer
std::array<std::array<bool, 2>, kCandidates> g_dead{};  // [config][cluster form]: its launch failed

// Whether clusters of `pieces` blocks of candidate c's cluster kernel can run here.
bool cluster_fits(int c, int pieces) {
    cudaLaunchConfig_t config{};
    config.gridDim = dim3(unsigned(pieces), 1, 1);
    config.blockDim = dim3(unsigned(threads(candidate(c))), 1, 1);
    config.dynamicSmemBytes = kRuns[size_t(c)].cluster_smem;
    cudaLaunchAttribute attr[1];
    attr[0].id = cudaLaunchAttributeClusterDimension;
    attr[0].val.clusterDim.x = unsigned(pieces);
    attr[0].val.clusterDim.y = 1;
    attr[0].val.clusterDim.z = 1;
    config.attrs = attr;
    config.numAttrs = 1;
    int n = 0;
    if (cudaOccupancyMaxActiveClusters(&n, kRuns[size_t(c)].cluster_kernel, &config) != cudaSuccess) {
        (void)cudaGetLastError();
        return false;
    }
    return n > 0;
}

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
    // The fastest run with K split, pieces summed through slabs / in a cluster.
    std::string slabs, cluster;
    double slabs_us = 0, cluster_us = 0;
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
    std::printf("%-16s %-30s %9.1f us %7.2f TFLOPS %6.1f%% %9.2e %s\n", shape, "cublas", blas_s * 1e6,
                flops / blas_s * 1e-12, 100.0, blas_err,
                sh.odd ? (blas_err <= tol ? "PASS(vs f64)" : "FAIL(vs f64)") : "reference");
    if (sh.odd && !(blas_err <= tol)) ++totals.fail;

    struct Run {
        std::string name;
        int config;  // candidate index
        int splits;
        bool cluster;  // pieces summed in a cluster, not through slabs
        bool plan;
    };
    std::vector<Run> runs;
    oprt::matmul::WarpTilingChoice pick = oprt::matmul::warp_tiling_choose(sh.m, sh.n, sh.k, g_sms, g_clusters);
    if (pick.cluster)  // as the library: slabs where such clusters do not fit
        pick.cluster = cluster_fits(pick.config, oprt::matmul::split_shape(sh.k, candidate(pick.config).bk,
                                                                           pick.splits).pieces);
    runs.push_back({"plan", pick.config, pick.splits, pick.cluster, true});
    for (int i = 0; i < (g_library_only ? kWarpTilingConfigCount : kCandidates); ++i) {
        const WarpTilingShape s = candidate(i);
        const int64_t tiles = ((sh.m + s.bm - 1) / s.bm) * ((sh.n + s.bn - 1) / s.bn);
        if (sh.m >= 1024 && s.bm < 64) continue;  // small-M tiles on large products: time better spent
        for (int splits : {1, 2, 3, 4, 6, 8, 12, 16}) {
            // Splits that can help: the blocks stay under 4 waves, each piece 2 slices deep
            // (odd shapes: whole K and 3 pieces only).
            if (splits > 1 && (tiles * splits > 4 * int64_t(g_sms) || sh.k / splits < 2 * s.bk)) continue;
            if (sh.odd && splits != 1 && splits != 3) continue;
            // Under compute-sanitizer: whole K, an odd count, the largest portable and the
            // largest non-portable cluster.
            if (!g_timing && splits != 1 && splits != 3 && splits != 8 && splits != 16) continue;
            const int pieces = oprt::matmul::split_shape(sh.k, s.bk, splits).pieces;
            runs.push_back({name(s), i, splits, false, false});
            if (pieces > 1 && pieces <= oprt::matmul::kMaxClusterPieces && g_clusters) {
                if (cluster_fits(i, pieces)) runs.push_back({name(s), i, splits, true, false});
                else std::printf("%-16s %-30s clusters of %d blocks do not fit here: skipped\n", shape,
                                 (name(s) + "/s" + std::to_string(pieces) + "c").c_str(), pieces);
            }
        }
    }

    Best best;
    best.shape = shape;
    best.blas_us = blas_s * 1e6;
    for (const Run &run : runs) {
        if (g_dead[size_t(run.config)][run.cluster]) continue;
        const WarpTilingShape s = candidate(run.config);
        const size_t ws_bytes = run.cluster ? 0 : gk::split_workspace_bytes(sh.m, sh.n, sh.k, s.bk, run.splits);
        const oprt::matmul::SplitShape split = oprt::matmul::split_shape(sh.k, s.bk, run.splits);
        void *ws = workspace(ws_bytes);
        GemmArgs gc = g;
        gc.c = c;
        const bool vec_c = sh.n % 4 == 0;  // C dense: rows 16-byte aligned when N is a multiple of 4
        const Candidate &cand = kRuns[size_t(run.config)];
        auto launch = [&] {
            if (run.cluster) (void)cand.launch_cluster(gc, vec_c, run.splits, stream);  // errors: cudaGetLastError
            else cand.launch(gc, vec_c, run.splits, ws, stream);
        };
        CK(cudaMemsetAsync(c, 0xFF, sh.m * sh.n * sizeof(float), stream));  // NaN everywhere
        if (ws_bytes) CK(cudaMemsetAsync(ws, 0xFF, ws_bytes, stream));
        launch();
        cudaError_t e = cudaGetLastError();
        if (e == cudaSuccess) e = cudaStreamSynchronize(stream);
        const std::string label = (run.plan ? "plan:" + name(s) : run.name) + "/s" + std::to_string(split.pieces) +
                                  (run.cluster ? "c" : "");
        if (e != cudaSuccess) {  // a launch error leaves the context usable: skip this config from now on
            std::printf("%-16s %-30s ERROR %s: its remaining runs (this form) are skipped\n", shape, label.c_str(),
                        cudaGetErrorString(e));
            ++totals.fail;
            g_dead[size_t(run.config)][run.cluster] = true;
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
        std::printf("%-16s %-30s %9.1f us %7.2f TFLOPS %6.1f%% %9.2e %s\n", shape, label.c_str(), sec * 1e6,
                    flops / sec * 1e-12, 100.0 * blas_s / sec, err, pass ? "PASS" : "FAIL");
        std::fflush(stdout);
        ++(pass ? totals.pass : totals.fail);
        if (run.plan) {
            best.plan = label.substr(5), best.plan_us = sec * 1e6;
        } else if (pass) {
            if (best.best.empty() || sec * 1e6 < best.best_us)
                best.best = label, best.best_us = sec * 1e6, best.best_config = run.config;
            if (run.cluster && (best.cluster.empty() || sec * 1e6 < best.cluster_us))
                best.cluster = label, best.cluster_us = sec * 1e6;
            if (!run.cluster && split.pieces > 1 && (best.slabs.empty() || sec * 1e6 < best.slabs_us))
                best.slabs = label, best.slabs_us = sec * 1e6;
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

// The tables after the run: per shape the fastest candidate and the plan's pick, the
// fastest slab and cluster sums, and the winners the library lacks.
void print_summary(const std::vector<Best> &summary) {
    if (summary.empty()) return;
    std::printf("\n%-16s %10s %-34s %10s %7s %-34s %10s %7s\n", "MxNxK", "cuBLAS us", "best", "us", "%cuBLAS", "plan",
                "us", "%cuBLAS");
    for (const Best &b : summary)
        std::printf("%-16s %10.1f %-34s %10.1f %6.1f%% %-34s %10.1f %6.1f%%\n", b.shape.c_str(), b.blas_us,
                    b.best.c_str(), b.best_us, 100.0 * b.blas_us / b.best_us, b.plan.c_str(), b.plan_us,
                    100.0 * b.blas_us / b.plan_us);
    std::printf("\nK split, fastest with the pieces summed through slabs and in a cluster:\n");
    for (const Best &b : summary)
        if (!b.slabs.empty() || !b.cluster.empty())
            std::printf("%-16s %-34s %10.1f %6.1f%%   %-34s %10.1f %6.1f%%\n", b.shape.c_str(),
                        b.slabs.empty() ? "-" : b.slabs.c_str(), b.slabs_us,
                        b.slabs.empty() ? 0.0 : 100.0 * b.blas_us / b.slabs_us, b.cluster.empty() ? "-" : b.cluster.c_str(),
                        b.cluster_us, b.cluster.empty() ? 0.0 : 100.0 * b.blas_us / b.cluster_us);
    std::printf("\nwinners not in the library (paste into kWarpTilingConfigs, warp_tiling_plan.h):\n");
    std::vector<int> shown;
    for (const Best &b : summary)
        if (b.best_config >= kWarpTilingConfigCount) {
            bool seen = false;
            for (int c : shown) seen = seen || c == b.best_config;
            if (!seen) std::printf("    %s,  // best at %s\n", line(candidate(b.best_config)).c_str(), b.shape.c_str());
            shown.push_back(b.best_config);
        }
}

// A shape's summary as one tab-separated line (from a shape's process to the first one).
void write_best(std::FILE *f, const Best &b) {
    auto text = [](const std::string &x) { return x.empty() ? std::string("-") : x; };
    std::fprintf(f, "%s\t%.3f\t%s\t%.3f\t%s\t%.3f\t%s\t%.3f\t%s\t%.3f\t%d\n", b.shape.c_str(), b.blas_us,
                 text(b.best).c_str(), b.best_us, text(b.plan).c_str(), b.plan_us, text(b.slabs).c_str(), b.slabs_us,
                 text(b.cluster).c_str(), b.cluster_us, b.best_config);
}
bool read_best(const char *text, Best &b) {
    char shape[64], best[96], plan[96], slabs[96], cluster[96];
    if (std::sscanf(text, "%63[^\t]\t%lf\t%95[^\t]\t%lf\t%95[^\t]\t%lf\t%95[^\t]\t%lf\t%95[^\t]\t%lf\t%d", shape,
                    &b.blas_us, best, &b.best_us, plan, &b.plan_us, slabs, &b.slabs_us, cluster, &b.cluster_us,
                    &b.best_config) != 11)
        return false;
    auto field = [](const char *x) { return std::strcmp(x, "-") == 0 ? std::string() : std::string(x); };
    b.shape = shape, b.best = field(best), b.plan = field(plan), b.slabs = field(slabs), b.cluster = field(cluster);
    return true;
}

// The timed sweep, one process per shape: a kernel that faults breaks the CUDA context of
// its process only, so the other shapes still run. Each process appends its summary line
// to a file that this one prints at the end.
int sweep_in_processes(const char *self, const std::vector<std::string> &flags, size_t shapes) {
    char path[] = "/tmp/camp_sgemm_summary_XXXXXX";
    const int fd = mkstemp(path);
    if (fd < 0) {
        std::printf("cannot create a summary file\n");
        return 1;
    }
    close(fd);
    // A kernel that never finishes (a barrier nobody reaches) stops its shape, not the sweep.
    const bool limit = std::system("command -v timeout > /dev/null 2>&1") == 0;
    int failed = 0;
    for (size_t i = 0; i < shapes; ++i) {
        std::string cmd = (limit ? "timeout -k 5 240 '" : "'") + std::string(self) + "'";
        for (const std::string &f : flags) cmd += " " + f;
        cmd += " --only " + std::to_string(i) + " --summary " + path;
        std::fflush(stdout);
        const int rc = std::system(cmd.c_str());
        if (rc != 0) {
            std::printf("shape %zu: its process ended with status %d\n", i, rc);
            ++failed;
        }
    }
    std::vector<Best> summary;
    if (std::FILE *f = std::fopen(path, "r")) {
        char text[1024];
        while (std::fgets(text, sizeof text, f)) {
            Best b;
            if (read_best(text, b)) summary.push_back(b);
        }
        std::fclose(f);
    }
    std::remove(path);
    print_summary(summary);
    std::printf("summary: %zu shapes, %d with failures (see above)\n", shapes, failed);
    return failed == 0 ? 0 : 1;
}

}  // namespace

int main(int argc, char **argv) {
    bool quick = false, big = false, in_process = false;
    long only = -1;
    const char *summary_file = nullptr;
    std::vector<std::string> flags;  // passed on to the shapes' processes
    for (int i = 1; i < argc; ++i) {
        if (std::strcmp(argv[i], "--check-only") == 0) g_timing = false;
        else if (std::strcmp(argv[i], "--quick") == 0) quick = true, flags.push_back(argv[i]);
        else if (std::strcmp(argv[i], "--big") == 0) big = true, flags.push_back(argv[i]);
        else if (std::strcmp(argv[i], "--in-process") == 0) in_process = true;
        else if (std::strcmp(argv[i], "--library") == 0) g_library_only = true, flags.push_back(argv[i]);
        else if (std::strcmp(argv[i], "--only") == 0 && i + 1 < argc) only = std::strtol(argv[++i], nullptr, 10);
        else if (std::strcmp(argv[i], "--summary") == 0 && i + 1 < argc) summary_file = argv[++i];
        else if (std::strcmp(argv[i], "--list") == 0) {
            for (int c = 0; c < kCandidates; ++c)
                std::printf("%-30s %3d threads %s%s\n", name(candidate(c)).c_str(), threads(candidate(c)),
                            line(candidate(c)).c_str(), c < kWarpTilingConfigCount ? "  (library)" : "");
            return 0;
        } else {
            std::printf("usage: %s [--check-only] [--quick] [--big] [--library] [--in-process] [--only I] [--list]\n", argv[0]);
            return 1;
        }
    }
    const std::vector<Shape> odd = {{33, 65, 17, true},      {1000, 1001, 999, true}, {4097, 4095, 4099, true},
                                    {17, 4099, 4093, true},  {130, 260, 1000, true}};
    std::vector<Shape> shapes;
    if (!g_timing) {
        // Split shapes (slabs and clusters, up to 16 pieces), then the odd ones.
        shapes = {{64, 1024, 1024, false}, {16, 2048, 2048, false}, {128, 1024, 4096, false},
                  {256, 256, 256, false}};
        for (const Shape &s : odd)
            if (s.m * s.n * s.k < int64_t(1) << 31) shapes.push_back(s);
    } else {
        if (quick) shapes = {{4096, 4096, 4096, false}, {64, 4096, 4096, false}, {128, 4096, 4096, false}};
        else shapes = {{4096, 4096, 4096, false}, {2048, 2048, 2048, false}, {16, 4096, 4096, false},
                       {64, 4096, 4096, false},   {128, 4096, 4096, false},  {1024, 1024, 1024, false}};
        if (big) shapes.push_back({8192, 8192, 8192, false});
        shapes.insert(shapes.end(), odd.begin(), odd.end());
    }
    if (only >= long(shapes.size())) {
        std::printf("--only %ld: there are %zu shapes\n", only, shapes.size());
        return 1;
    }
    int devices = 0;
    if (cudaGetDeviceCount(&devices) != cudaSuccess || devices == 0) {
        std::printf("skipped: no CUDA device visible\n");
        return 0;
    }
    if (g_timing && only < 0 && !in_process) return sweep_in_processes(argv[0], flags, shapes.size());
    if (only >= 0) shapes = {shapes[size_t(only)]};

    cudaDeviceProp prop;
    CK(cudaGetDeviceProperties(&prop, 0));
    g_sms = prop.multiProcessorCount;
    g_clusters = prop.major >= 9;
    const bool first = only <= 0;  // the first process prints the device and the configs
    if (first)
        std::printf("device: %s (compute capability %d.%d, %d SMs)\n", prop.name, prop.major, prop.minor,
                    prop.multiProcessorCount);
    // What each candidate compiled to: registers, spills (local memory), shared memory, and
    // the blocks that fit on one SM; the same for its cluster form, which is allowed here
    // its shared memory and cluster sizes above 8.
    for (int c = 0; c < kCandidates; ++c) {
        const Candidate &cand = kRuns[size_t(c)];
        const size_t smem = candidate(c).stages > 0 ? size_t(candidate(c).stages) : 2;
        const size_t pipe = smem * size_t(candidate(c).bk) * size_t(candidate(c).bm + candidate(c).bn) * sizeof(float);
        for (int form = 0; form < (g_clusters ? 2 : 1); ++form) {
            const void *fn = form ? cand.cluster_kernel : cand.kernel;
            const size_t bytes = form ? cand.cluster_smem : pipe;
            if (form || bytes > 48 * 1024)
                CK(cudaFuncSetAttribute(fn, cudaFuncAttributeMaxDynamicSharedMemorySize, int(bytes)));
            if (form) CK(cudaFuncSetAttribute(fn, cudaFuncAttributeNonPortableClusterSizeAllowed, 1));
            cudaFuncAttributes attr;
            CK(cudaFuncGetAttributes(&attr, fn));
            int blocks = 0;
            CK(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&blocks, fn, threads(candidate(c)), bytes));
            if (first)
                std::printf("config %-30s %-7s %3d threads %3d registers %4zu B local %6zu B smem %d blocks/SM%s\n",
                            name(candidate(c)).c_str(), form ? "cluster" : "", threads(candidate(c)), attr.numRegs,
                            attr.localSizeBytes, bytes, blocks, c < kWarpTilingConfigCount ? " (library)" : "");
        }
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
    if (first)
        std::printf("%-16s %-30s %12s %14s %7s %9s %s\n", "MxNxK", "kernel (config/splits)", "time", "rate", "cuBLAS",
                    "max_err", "check");
    Totals totals;
    std::vector<Best> summary;
    for (const Shape &s : shapes) run_shape(s, handle, stream, stats, totals, summary);

    if (summary_file != nullptr) {
        if (std::FILE *f = std::fopen(summary_file, "a")) {
            for (const Best &b : summary) write_best(f, b);
            std::fclose(f);
        }
    } else {
        print_summary(summary);
    }
    CK(cudaFree(stats));
    cublasDestroy(handle);
    CK(cudaStreamDestroy(stream));
    std::printf("%s: pass %d fail %d\n", summary_file ? "shape" : "summary", totals.pass, totals.fail);
    return totals.fail == 0 ? 0 : 1;
}
