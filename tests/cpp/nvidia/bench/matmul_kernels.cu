// matmul's tensor-core kernels against cuBLAS: correctness and speed, run by hand on a GPU.
//
//   camp_matmul_bench [--quick] [--check-only] [--kernel=mma_sync|wgmma|all] [--sweep[=NAMES]] [--bf16-only]
//                     [--rotate] [--shape=MxNxK]...
//
// For f16 and bf16, square (1024 .. 8192), skinny (16|64|128 x 4096 x 4096) and odd shapes,
// and the layouts A row-major with B row- or column-major (plus A column-major on the odd
// shapes): cublasGemmEx (f32 compute, default algorithm) is the reference and the peer; each
// kernel that supports the case runs into a NaN-poisoned C and is compared with cuBLAS
// (and, on odd shapes, with a naive f32 GPU kernel), then timed as cuBLAS is: a CUDA graph
// of 20 launches replayed 7 times, the median (graph_timing.cuh). Leading dimensions are
// padded to multiples of 8 (what the kernels need) and the padding holds NaN, so a kernel
// reading outside its matrix fails. Error: max over elements of |x - ref| / max(|ref|, rms),
// where rms = sqrt(K) / 3 is the typical size of an entry (inputs uniform in [-1, 1]).
// A kernel whose launch or run reports an error is not run again; a kernel that breaks the
// CUDA context ends the program (run each kernel in its own process to isolate them).
// --quick: bf16 4096^3 and the odd shapes. --check-only: no timing (for compute-sanitizer).
// --sweep: for each type, also every wgmma variant (tile shape) with each K split that can fill
// the GPU ("wg:128x256/s1": 128x256 tiles, K not split; "/d": not split, C stored from
// registers rather than through shared memory and TMA; "wg:64x64/c": K in two pieces summed
// in a cluster, where the tiles leave room for it; NAMES: only these variants,
// comma-separated, e.g. --sweep=128x256,64x128; --list-variants prints them), checked like the rest,
// then per case the fastest and what the plan picks now: the figures that set the plan's
// table in wgmma.cu. Odd shapes run splits 1 and 3 only, for correctness.
// --shape=MxNxK (repeatable): only these shapes (timed, and checked against cuBLAS).
// --rotate: the timed calls (cuBLAS's too) cycle through copies of A, B and C that add up to
// 4x the L2 (at least 2 copies), so each call reads its operands from DRAM: the "dram"
// condition of tests/run_ops.py, the one docs/kernels/matmul.md reports. Without it one set
// is replayed and B of a skinny product stays in the L2 ("hot"). Only the first set is checked.
#include <cublas_v2.h>
#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <cuda_runtime.h>

#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <functional>
#include <set>
#include <string>
#include <vector>

#include "ops/matmul/nvidia/mma_sync.cuh"
#include "ops/matmul/nvidia/wgmma.cuh"
#include "tests/cpp/nvidia/bench/gemm_check.cuh"
#include "tests/cpp/nvidia/bench/graph_timing.cuh"

namespace {

using namespace gemm_check;

using oprt::matmul::GemmArgs;
bool g_timing = true;
bool g_sweep = false;
bool g_rotate = false;  // --rotate
int64_t g_l2_bytes = 0;
std::string g_match;  // --sweep=NAMES: the variants to sweep, comma-separated (all when empty)
int g_sms = 1;

template <typename F>
double seconds(F launch, cudaStream_t stream) {
    return g_timing ? graph_seconds_per_launch(launch, stream) : double(NAN);
}
namespace mm = oprt::matmul::nvidia;

// Work units of wgmma variant v with K not split, from its name ("BMxBN").
int64_t sweep_units(const GemmArgs &g, int v) {
    int bm = 128, bn = 256;
    std::sscanf(mm::wgmma_variant_name(v), "%dx%d", &bm, &bn);
    return ((g.m + bm - 1) / bm) * ((g.n + bn - 1) / bn);
}

int64_t round8(int64_t x) { return (x + 7) / 8 * 8; }

// C[i][j] in f32, one thread each, from the same strided inputs.
template <typename T>
__global__ void naive(GemmArgs g, float *ref) {
    const int64_t i = blockIdx.y * int64_t(blockDim.y) + threadIdx.y, j = blockIdx.x * int64_t(blockDim.x) + threadIdx.x;
    if (i >= g.m || j >= g.n) return;
    const T *a = static_cast<const T *>(g.a);
    const T *b = static_cast<const T *>(g.b);
    float s = 0.f;
    for (int64_t p = 0; p < g.k; ++p) s += float(a[i * g.a_row + p * g.a_col]) * float(b[p * g.b_row + j * g.b_col]);
    ref[i * g.n + j] = s;
}

struct Layout {
    const char *name;
    bool a_row, b_row;  // row-major (contiguous along K for A, along N for B)
};

struct Shape {
    int64_t m, n, k;
    bool odd;  // also checked against the naive kernel, and with A column-major
};

struct Totals {
    int pass = 0, fail = 0, skip = 0;
};

template <typename T>
void run_dtype(bool bf16, bool sweep, const std::vector<Shape> &shapes, const std::vector<std::string> &kernels,
               cublasHandle_t handle, cudaStream_t stream, std::set<std::string> &dead, Totals &totals) {
    const oprt_dtype_t dtype = bf16 ? OPRT_DTYPE_BF16 : OPRT_DTYPE_F16;
    const cudaDataType_t cuda_type = bf16 ? CUDA_R_16BF : CUDA_R_16F;
    const char *dname = bf16 ? "bf16" : "f16";
    const double tol = bf16 ? 1.6e-2 : 2e-3;  // two units in the last place of the output
    const Layout layouts[] = {{"A_row/B_row", true, true}, {"A_row/B_col", true, false}, {"A_col/B_row", false, true}};
    unsigned *stats = nullptr;
    CK(cudaMalloc(&stats, 2 * sizeof(unsigned)));

    for (const Shape &sh : shapes) {
        for (const Layout &lay : layouts) {
            if (!lay.a_row && !sh.odd) continue;
            GemmArgs g;
            g.m = sh.m, g.n = sh.n, g.k = sh.k;
            // A: row-major M x round8(K), or column-major (K rows of round8(M)); B likewise.
            const int64_t a_outer = lay.a_row ? sh.m : sh.k, a_inner = lay.a_row ? sh.k : sh.m, a_ld = round8(a_inner);
            const int64_t b_outer = lay.b_row ? sh.k : sh.n, b_inner = lay.b_row ? sh.n : sh.k, b_ld = round8(b_inner);
            g.a_row = lay.a_row ? a_ld : 1, g.a_col = lay.a_row ? 1 : a_ld;
            g.b_row = lay.b_row ? b_ld : 1, g.b_col = lay.b_row ? 1 : b_ld;
            g.c_row = sh.n, g.c_col = 1;
            T *a = nullptr, *b = nullptr, *c = nullptr, *c_blas = nullptr;
            float *ref = nullptr;
            CK(cudaMalloc(&a, a_outer * a_ld * sizeof(T)));
            CK(cudaMalloc(&b, b_outer * b_ld * sizeof(T)));
            CK(cudaMalloc(&c, sh.m * sh.n * sizeof(T)));
            CK(cudaMalloc(&c_blas, sh.m * sh.n * sizeof(T)));
            fill<<<1024, 256, 0, stream>>>(a, a_outer, a_inner, a_ld, 1);
            fill<<<1024, 256, 0, stream>>>(b, b_outer, b_inner, b_ld, 2);
            CK(cudaGetLastError());
            g.a = a, g.b = b;
            // --rotate: sets[0] is (a, b, c, c_blas); the others are copies, used by the timed calls only.
            struct Set {
                T *a, *b, *c, *c_blas;
            };
            std::vector<Set> sets = {{a, b, c, c_blas}};
            if (g_rotate) {
                const int64_t set_bytes = (a_outer * a_ld + b_outer * b_ld + 2 * sh.m * sh.n) * int64_t(sizeof(T));
                const int64_t want = (4 * g_l2_bytes + set_bytes - 1) / set_bytes;
                const int count = int(want < 2 ? 2 : (want > 16 ? 16 : want));
                for (int i = 1; i < count; ++i) {
                    Set x{};
                    CK(cudaMalloc(&x.a, a_outer * a_ld * sizeof(T)));
                    CK(cudaMalloc(&x.b, b_outer * b_ld * sizeof(T)));
                    CK(cudaMalloc(&x.c, sh.m * sh.n * sizeof(T)));
                    CK(cudaMalloc(&x.c_blas, sh.m * sh.n * sizeof(T)));
                    CK(cudaMemcpyAsync(x.a, a, a_outer * a_ld * sizeof(T), cudaMemcpyDeviceToDevice, stream));
                    CK(cudaMemcpyAsync(x.b, b, b_outer * b_ld * sizeof(T), cudaMemcpyDeviceToDevice, stream));
                    sets.push_back(x);
                }
            }
            size_t turn = 0;  // the set of the next timed call
            auto next_set = [&]() -> const Set & {
                turn = (turn + 1) % sets.size();
                return sets[turn];
            };
            const float floor = float(std::sqrt(double(sh.k)) / 3.0);
            const double flops = 2.0 * double(sh.m) * double(sh.n) * double(sh.k);
            char shape[64];
            std::snprintf(shape, sizeof shape, "%lldx%lldx%lld", (long long)sh.m, (long long)sh.n, (long long)sh.k);

            auto error_vs = [&](const T *x, bool vs_naive) {
                return vs_naive ? max_error(x, ref, sh.m * sh.n, floor, stats, stream)
                                : max_error(x, c_blas, sh.m * sh.n, floor, stats, stream);
            };

            // cuBLAS, column-major: C^T (N x M, ld c_row) = B^T A^T. A row-major buffer read
            // column-major is the transpose, so row-major operands go in untransposed.
            const float one = 1.f, zero = 0.f;
            auto blas = [&](const Set &x) {
                return cublasGemmEx(handle, lay.b_row ? CUBLAS_OP_N : CUBLAS_OP_T, lay.a_row ? CUBLAS_OP_N : CUBLAS_OP_T,
                                    int(sh.n), int(sh.m), int(sh.k), &one, x.b, cuda_type, int(b_ld), x.a, cuda_type,
                                    int(a_ld), &zero, x.c_blas, cuda_type, int(sh.n), CUBLAS_COMPUTE_32F,
                                    CUBLAS_GEMM_DEFAULT);
            };
            CK(cudaMemsetAsync(c_blas, 0xFF, sh.m * sh.n * sizeof(T), stream));
            if (blas(sets[0]) != CUBLAS_STATUS_SUCCESS) {
                std::printf("%s %s %s cublas: cublasGemmEx failed\n", shape, dname, lay.name);
                std::exit(1);
            }
            CK(cudaStreamSynchronize(stream));
            double blas_err = 0;
            if (sh.odd) {
                CK(cudaMalloc(&ref, sh.m * sh.n * sizeof(float)));
                const dim3 block(32, 8), grid(unsigned((sh.n + 31) / 32), unsigned((sh.m + 7) / 8));
                naive<T><<<grid, block, 0, stream>>>(g, ref);
                CK(cudaGetLastError());
                blas_err = error_vs(c_blas, true);
            }
            const double blas_s = seconds([&] { blas(next_set()); }, stream);
            std::printf("%-16s %-4s %-11s %-16s %9.1f us %7.1f TFLOPS %6.1f%% %9.2e %s\n", shape, dname, lay.name, "cublas",
                        blas_s * 1e6, flops / blas_s * 1e-12, 100.0, blas_err,
                        sh.odd ? (blas_err <= tol ? "PASS(vs naive)" : "FAIL(vs naive)") : "reference");
            if (sh.odd && !(blas_err <= tol)) ++totals.fail;

            // The candidates: the kernels by name; in a sweep, also every wgmma variant with
            // the K splits that make sense here (more units than 2 waves gain nothing).
            struct Run {
                std::string name;
                bool supported;
                size_t workspace;
                std::function<cudaError_t(const GemmArgs &, void *)> launch;
            };
            std::vector<Run> runs;
            for (const std::string &kname : kernels) {
                if (kname == "wgmma") {
                    const mm::WgmmaChoice plan = mm::wgmma_choose(g, g_sms);
                    runs.push_back({kname, mm::wgmma_supports(g, dtype), mm::wgmma_workspace_bytes(g, plan),
                                    [&, plan](const GemmArgs &x, void *ws) {
                                        return mm::wgmma_launch(x, dtype, plan, ws, stream);
                                    }});
                } else {
                    runs.push_back({kname, mm::mma_sync_supports(g, dtype), 0,
                                    [&](const GemmArgs &x, void *) { return mm::mma_sync_launch(x, dtype, stream); }});
                }
            }
            if (sweep && mm::wgmma_supports(g, dtype)) {
                // The plan's choice launched plainly: what the overlapped launch gains.
                mm::WgmmaChoice plain = mm::wgmma_choose(g, g_sms);
                plain.overlapped = false;
                runs.push_back({"wgmma-plain", true, mm::wgmma_workspace_bytes(g, plain),
                                [&, plain](const GemmArgs &x, void *ws) { return mm::wgmma_launch(x, dtype, plain, ws, stream); }});
                const int sms = g_sms;
                const int64_t k_tiles = (sh.k + 63) / 64;
                for (int v = 0; v < mm::wgmma_variant_count(); ++v) {
                    if (!g_match.empty() && ("," + g_match + ",").find(std::string(",") + mm::wgmma_variant_name(v) + ",") ==
                                                std::string::npos)
                        continue;
                    for (int splits : {0, 1, 2, 3, 4, 6, 8, 16}) {
                        // 0: not split, C stored from registers ("/d") instead of through TMA
                        mm::WgmmaChoice choice;
                        choice.variant = v, choice.splits = splits == 0 ? 1 : splits, choice.direct_store = splits == 0;
                        const int64_t units = sweep_units(g, v) * splits;
                        if (splits > 1 && (k_tiles / splits < 2 || units > 2 * sms)) continue;
                        if (sh.odd && splits > 1 && splits != 3) continue;  // odd shapes: correctness only
                        const std::string suffix = splits == 0 ? "/d" : "/s" + std::to_string(splits);
                        runs.push_back({std::string("wg:") + mm::wgmma_variant_name(v) + suffix, true,
                                        mm::wgmma_workspace_bytes(g, choice),
                                        [&, choice](const GemmArgs &x, void *ws) {
                                            return mm::wgmma_launch(x, dtype, choice, ws, stream);
                                        }});
                    }
                    // K in a pair of pieces summed in a cluster ("/c"), where the 64x64 tiles
                    // leave room for it.
                    if (std::string(mm::wgmma_variant_name(v)) == "64x64" && 2 * sweep_units(g, v) <= sms &&
                        k_tiles >= 8) {
                        mm::WgmmaChoice pair;
                        pair.variant = v, pair.cluster_k = true;
                        runs.push_back({std::string("wg:64x64/c"), true, 0, [&, pair](const GemmArgs &x, void *ws) {
                                            return mm::wgmma_launch(x, dtype, pair, ws, stream);
                                        }});
                    }
                    // One piece launched plainly ("/p"): what the overlapped launch gains or costs.
                    mm::WgmmaChoice one;
                    one.variant = v, one.overlapped = false;
                    runs.push_back({std::string("wg:") + mm::wgmma_variant_name(v) + "/p", true, 0,
                                    [&, one](const GemmArgs &x, void *ws) {
                                        return mm::wgmma_launch(x, dtype, one, ws, stream);
                                    }});
                }
            }

            std::string best_name;
            double best_s = 0;
            for (const Run &run : runs) {
                const char *kname = run.name.c_str();
                if (dead.count(run.name)) continue;
                if (!run.supported) {
                    std::printf("%-16s %-4s %-11s %-16s unsupported here\n", shape, dname, lay.name, kname);
                    ++totals.skip;
                    continue;
                }
                GemmArgs gk = g;
                gk.c = c;
                void *ws = workspace(run.workspace);
                auto launch = [&] { return run.launch(gk, ws); };
                CK(cudaMemsetAsync(c, 0xFF, sh.m * sh.n * sizeof(T), stream));  // NaN everywhere
                if (run.workspace) CK(cudaMemsetAsync(ws, 0xFF, run.workspace, stream));
                cudaError_t e = launch();
                if (e == cudaSuccess) e = cudaStreamSynchronize(stream);
                if (e == cudaSuccess) e = cudaGetLastError();
                if (e != cudaSuccess) {
                    std::printf("%-16s %-4s %-11s %-16s ERROR %s: its remaining cases are skipped\n", shape, dname, lay.name,
                                kname, cudaGetErrorString(e));
                    ++totals.fail;
                    dead.insert(run.name);
                    if (!context_alive()) {
                        std::printf("summary: the CUDA context is broken; stopping. pass %d fail %d skipped %d\n",
                                    totals.pass, totals.fail, totals.skip);
                        std::exit(2);
                    }
                    continue;
                }
                double err = error_vs(c, false);
                if (sh.odd) {
                    const double e_naive = error_vs(c, true);
                    err = std::isnan(err) || std::isnan(e_naive) ? double(NAN) : std::fmax(err, e_naive);
                }
                const bool pass = std::isfinite(err) && err <= tol;
                const double s = seconds(
                    [&] {
                        const Set &x = next_set();
                        GemmArgs gx = gk;
                        gx.a = x.a, gx.b = x.b, gx.c = x.c;
                        run.launch(gx, ws);
                    },
                    stream);
                std::printf("%-16s %-4s %-11s %-16s %9.1f us %7.1f TFLOPS %6.1f%% %9.2e %s\n", shape, dname, lay.name,
                            kname, s * 1e6, flops / s * 1e-12, 100.0 * blas_s / s, err, pass ? "PASS" : "FAIL");
                ++(pass ? totals.pass : totals.fail);
                if (pass && run.name.rfind("wg:", 0) == 0 && (best_name.empty() || s < best_s)) best_name = run.name, best_s = s;
                std::fflush(stdout);
            }
            if (!best_name.empty() && g_timing) {
                const mm::WgmmaChoice plan = mm::wgmma_choose(g, g_sms);
                const std::string split = plan.cluster_k ? "c" : "s" + std::to_string(plan.splits);
                std::printf("%-16s %-4s %-11s best %s %.1f us %.1f%% of cuBLAS (%s); the plan picks %s/%s\n", shape,
                            dname, lay.name, best_name.c_str() + 3, best_s * 1e6, 100.0 * blas_s / best_s,
                            g_rotate ? "dram" : "hot", mm::wgmma_variant_name(plan.variant), split.c_str());
            }
            CK(cudaFree(a));
            CK(cudaFree(b));
            CK(cudaFree(c));
            CK(cudaFree(c_blas));
            if (ref) CK(cudaFree(ref));
            for (size_t i = 1; i < sets.size(); ++i) {
                CK(cudaFree(sets[i].a));
                CK(cudaFree(sets[i].b));
                CK(cudaFree(sets[i].c));
                CK(cudaFree(sets[i].c_blas));
            }
            std::fflush(stdout);
        }
    }
    CK(cudaFree(stats));
}

}  // namespace

int main(int argc, char **argv) {
    bool quick = false, bf16_only = false;
    std::string only = "all";
    std::vector<Shape> picked;  // --shape
    for (int i = 1; i < argc; ++i) {
        if (std::strcmp(argv[i], "--quick") == 0) quick = true;
        else if (std::strcmp(argv[i], "--check-only") == 0) g_timing = false;
        else if (std::strncmp(argv[i], "--kernel=", 9) == 0) only = argv[i] + 9;
        else if (std::strcmp(argv[i], "--sweep") == 0) g_sweep = true;
        else if (std::strcmp(argv[i], "--bf16-only") == 0) bf16_only = true;
        else if (std::strcmp(argv[i], "--rotate") == 0) g_rotate = true;
        else if (std::strncmp(argv[i], "--sweep=", 8) == 0) g_sweep = true, g_match = argv[i] + 8;
        else if (long long m, n, k; std::sscanf(argv[i], "--shape=%lldx%lldx%lld", &m, &n, &k) == 3 && m > 0 && n > 0 && k > 0)
            picked.push_back({m, n, k, false});
        else if (std::strcmp(argv[i], "--list-variants") == 0) {
            for (int v = 0; v < mm::wgmma_variant_count(); ++v) std::printf("%s\n", mm::wgmma_variant_name(v));
            return 0;
        }
        else {
            std::printf("usage: %s [--quick] [--check-only] [--kernel=mma_sync|wgmma|all] [--sweep[=NAMES]] [--bf16-only] "
                        "[--rotate] [--shape=MxNxK]...\n", argv[0]);
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
    g_l2_bytes = prop.l2CacheSize;
    std::printf("timed calls: %s\n", g_rotate ? "dram (buffer sets cycled through 4x the L2)" : "hot (one buffer set)");

    std::vector<std::string> kernels;
    if (only == "all" || only == "mma_sync") kernels.push_back("mma_sync");
    if (only == "all" || only == "wgmma") kernels.push_back("wgmma");
    if (kernels.empty()) {
        std::printf("unknown kernel %s\n", only.c_str());
        return 1;
    }
    std::set<std::string> dead;

    // 1100x1000x999: C rows 16-byte aligned (TMA stores) with partial tiles everywhere.
    const std::vector<Shape> odd = {
        {33, 65, 17, true}, {1000, 1001, 999, true}, {1100, 1000, 999, true}, {4097, 4095, 4099, true}};
    std::vector<Shape> all;
    if (quick) {
        all.push_back({4096, 4096, 4096, false});
    } else {
        for (int64_t s : {1024, 2048, 4096, 8192}) all.push_back({s, s, s, false});
        for (int64_t m : {16, 64, 128}) all.push_back({m, 4096, 4096, false});
    }
    all.insert(all.end(), odd.begin(), odd.end());
    if (!picked.empty()) all = picked;

    cublasHandle_t handle;
    cudaStream_t stream;
    CK(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking));
    if (cublasCreate(&handle) != CUBLAS_STATUS_SUCCESS || cublasSetStream(handle, stream) != CUBLAS_STATUS_SUCCESS) {
        std::printf("cublasCreate failed\n");
        return 1;
    }
    std::printf("%-16s %-4s %-11s %-16s %12s %14s %7s %9s %s\n", "MxNxK", "type", "layout", "kernel", "time", "rate",
                "cuBLAS", "max_err", "check");
    Totals totals;
    run_dtype<__nv_bfloat16>(true, g_sweep, all, kernels, handle, stream, dead, totals);
    if (!bf16_only) run_dtype<__half>(false, g_sweep, quick ? odd : all, kernels, handle, stream, dead, totals);
    cublasDestroy(handle);
    CK(cudaStreamDestroy(stream));
    std::printf("summary: pass %d fail %d skipped %d\n", totals.pass, totals.fail, totals.skip);
    return totals.fail == 0 ? 0 : 1;
}
