// Short softmax rows (up to 4096 columns): which launch shape of the register
// kernel is fastest for each shape, next to the library's plan.
//
// For each shape and dtype (f32, f16, bf16) it times, in two conditions,
//   hot   one input/output pair replayed (the input L2-resident where it fits,
//         as a tensor the previous layer just wrote);
//   dram  input/output pairs rotated over >= 240 MiB (a case that moves more
//         has one pair: its hot and dram figures are one measurement),
// these candidates:
//   plan       the library's choice (oprt_execute_softmax; its kernel name);
//   new tT vV  softmax_rows_registers_kernel (ops/softmax/nvidia/rows_registers.cuh):
//              T threads per row, V 16-byte vectors a thread, for every V with
//              T = the power of two that holds the row; "triton" marks the shape
//              of a one-row-per-program Triton softmax (128 threads per row up
//              to 2048 columns, 256 beyond, the row padded to a power of two);
//   new tT vV bB / staged  the same kernel at 32 or 64 threads a row holding
//              16 or more values a thread, with B blocks per SM asked of
//              ptxas (B * block = 1024 threads: at most 64 registers) and/or
//              the loads staged through shared memory (Feed::kStaged). t32 v4 b8
//              staged is the shape and means of the warp-per-row kernel that
//              rows_registers replaced (a warp a row, 32 values a lane, 8
//              blocks of 128 threads, staged loads), which took 17.7 us
//              (16384x1024) and 66.3 us (65536x1024) at 16 bits (hot; H200,
//              2026-12-02).
//   pers ... tT vV  the same kernel's persistent feeds: a grid of the
//              resident blocks (or half of them: "half"), each group looping
//              over rows with the grid's stride and loading its next row before
//              reducing this one: into a second register set ("pers",
//              Feed::kPersistent), or by cp.async into the second stage of a
//              ring in shared memory ("pers ring2", Feed::kPersistentRing);
//              rows up to 4096 columns. (The plan line times the library's
//              rows_registers_persistent where kRegisterRows takes it.)
//   quack tT vV  the register kernel at the shape of QuACK's softmax (threads
//              a row by row length, vectors not rounded to a power of two),
//              plain, staged, and persistent ("pers quack", "pers ring2 quack").
// After each condition's line of times: the fastest one-row-a-group launch
// (rows_registers' loop, "one-row") against the fastest persistent one, and a
// second summary table of those two closes the run.
// Every candidate first runs once on random data into a NaN-poisoned output and
// is checked against a float64 reference; a candidate that fails is reported
// and not timed. Times: launches captured in a CUDA graph, the median of
// several replays (graph_timing.cuh); every launch of the candidates goes
// through gpu::launch_overlapped, as the library's do.
//
// Output, per shape, dtype and condition: the plan's kernel and time, the best
// candidate and its time, their ratio, and (bf16) the fastest peer of the
// benchmark record docs/perf/peers-2026-12-05-h200/softmax-report.md (measured
// by tests/run_ops.py, not by this program); then every candidate's time.
// A summary table closes the run.
//
// Build (from the repository root, after building the NVIDIA library in build-nvidia):
//   cmake --build build-nvidia --target camp_softmax_rows_bench -j2
//   build-nvidia/tests/cpp/nvidia/camp_softmax_rows_bench [--dtype f32,f16,bf16] [--shape 1024x1024,4x1024]
//                                                          [--hot-launches N]
// (--hot-launches: the calls one graph of the hot condition holds, 20 unless
// given; tests/run_ops.py captures up to 4096.)
// (--shape takes any ROWSxCOLS in place of the default list, rows up to 16384
// columns: e.g. 4096x8192 and 2048x16384, rows the register kernels hold beyond
// the short-row cases; 16384x2304 and 16384x3000, many rows just past 2048
// columns; 4080x1535, 2032x2303, 784x3839, rows of odd length.)
// or by hand (one line):
//   nvcc -O3 -std=c++17 --expt-relaxed-constexpr -arch=sm_90 -I. -Iinclude
//        tests/cpp/nvidia/bench/softmax_rows.cu -o softmax_rows -Lbuild-nvidia -lcamp_ops
// It needs libcamp_ops.so at run time (LD_LIBRARY_PATH=<folder holding it>).
#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <cuda_runtime.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <random>
#include <string>
#include <thread>
#include <vector>

#include "operator_runtime/api.h"
#include "operator_runtime/ops/softmax.h"
#include "ops/softmax/nvidia/kernel.cuh"
#include "ops/softmax/nvidia/rows_registers.cuh"
#include "tests/cpp/nvidia/bench/softmax_common.cuh"

namespace sm = oprt::softmax::gpu_kernels;
using oprt::gpu::OuterIndex;

// gpu::launch_overlapped asks this (the library's own copy is internal to it):
// overlapped launches on sm_90 and later, as the library makes them.
namespace oprt::gpu {
bool overlapped_launch_allowed() {
    static const bool allowed = [] {
        int major = 0;
        return cudaDeviceGetAttribute(&major, cudaDevAttrComputeCapabilityMajor, 0) == cudaSuccess && major >= 9;
    }();
    return allowed;
}
}  // namespace oprt::gpu

namespace {

constexpr int64_t kDramBytes = int64_t(240) << 20;  // bytes the dram condition rotates over, at least
int g_hot_launches = 20;  // --hot-launches: calls in the hot condition's graph
constexpr int kHotReplays = 7;
constexpr int kDramMinLaunches = 20, kDramReplays = 5;
constexpr int64_t kMaxCols = 16384;  // longest row a candidate instance is compiled for
constexpr int64_t kMaxPersCols = 4096;  // longest row a persistent candidate is compiled for

struct Shape {
    int64_t rows, cols;
};
const Shape kShapes[] = {{4, 1024},    {144, 1280},  {1008, 1280},  {1024, 1024}, {1008, 2304},
                         {2032, 2304}, {784, 3840},  {4080, 1536},  {16384, 1024}, {65536, 1024},
                         {32768, 128}, {8192, 4096}, {1024, 4096}, {32768, 32}, {32768, 64}};

// The shapes of --shape's list, ROWSxCOLS separated by commas (empty: kShapes).
std::vector<Shape> shapes_to_run(const std::string &csv) {
    if (csv.empty()) return std::vector<Shape>(std::begin(kShapes), std::end(kShapes));
    std::vector<Shape> run;
    size_t start = 0;
    while (start < csv.size()) {
        size_t end = csv.find(',', start);
        if (end == std::string::npos) end = csv.size();
        long long rows = 0, cols = 0;
        if (std::sscanf(csv.substr(start, end - start).c_str(), "%lldx%lld", &rows, &cols) == 2 && rows > 0 &&
            cols > 0)
            run.push_back({rows, cols});
        else
            std::printf("--shape: '%s' is not ROWSxCOLS; left out\n", csv.substr(start, end - start).c_str());
        start = end + 1;
    }
    return run;
}

// bf16, the fastest peer (torch, inductor, Triton, QuACK) of the benchmark
// record of 2026-12-05 (H200, tests/run_ops.py): dram and hot, us.
struct Peer {
    int64_t rows, cols;
    double dram, hot;
    const char *dram_who, *hot_who;
};
const Peer kPeersBf16[] = {
    {4, 1024, 1.92, 1.51, "triton", "triton"},         {1024, 1024, 3.12, 2.29, "quack", "quack"},
    {65536, 1024, 65.00, 65.00, "compile", "compile"}, {144, 1280, 2.51, 1.88, "triton", "quack"},
    {1008, 1280, 3.39, 2.60, "quack", "quack"},        {1008, 2304, 4.60, 3.49, "quack", "quack"},
    {2032, 2304, 6.81, 4.64, "quack", "quack"},        {784, 3840, 5.15, 3.77, "triton", "triton"},
    {4080, 1536, 7.66, 4.79, "quack", "quack"},        {32768, 128, 5.95, 3.98, "quack", "quack"},
    {16384, 1024, 18.14, 17.32, "quack", "quack"},     {8192, 4096, 33.99, 34.08, "triton", "triton"},
    {32768, 32, 3.05, 2.70, "quack", "quack"},
};

OuterIndex rows_index(int64_t L) {
    OuterIndex ix;
    ix.ndim = 1;
    ix.shape[0] = int64_t(1) << 40;
    ix.in_strides[0] = L;
    ix.out_strides[0] = L;
    return ix;
}

cudaStream_t g_stream;

// ---- Candidates -----------------------------------------------------------------------

using LaunchFn = void (*)(const void *in, void *out, int64_t rows, int64_t L, cudaStream_t s);

// kVariant: bit 0 asks for blocks of 1024 threads per SM in all (64 registers
// at most), bit 1 stages the loads through shared memory, bit 2 asks for 2048
// threads per SM (32 registers at most).
constexpr int kVariants = 5;
// The blocks an SM a variant asks of ptxas for blocks of `block` threads (0: no bound).
constexpr int variant_min_blocks(int block, int variant) {
    return (variant & 4) ? 2048 / block : (variant & 1) ? 1024 / block : 0;
}
// The variants are timed where registers bound the resident warps (16 or more
// values a thread): 1-3 at 32 or 64 threads a row, 4 at whole blocks of 16
// values a thread.
constexpr bool variant_taken(int threads, int values, int variant) {
    if (variant == 0) return true;
    if (variant == 4) return threads >= 128 && values == 16;
    return (threads == 32 || threads == 64) && values >= 16;
}
template <typename T, int kT, int kV, int kVariant>
void launch_new(const void *in, void *out, int64_t rows, int64_t L, cudaStream_t s) {
    constexpr int kB = variant_min_blocks(sm::register_rows_block<kT>(), kVariant);
    constexpr sm::Feed kFeed = (kVariant & 2) ? sm::Feed::kStaged : sm::Feed::kLoads;
    sm::launch_register_rows<T, kT, kV, kB, kFeed>(static_cast<const T *>(in), static_cast<T *>(out), rows, L, true,
                                                   rows_index(L), s);
}
template <typename T, int kT, int kV, int kVariant>
LaunchFn new_if_compiled() {
    constexpr int P = oprt::gpu::vector_width<T>();
    if constexpr (kV * P <= 32 && int64_t(kT) * kV * P <= kMaxCols && variant_taken(kT, kV * P, kVariant))
        return &launch_new<T, kT, kV, kVariant>;
    else
        return nullptr;
}
template <typename T, int kV, int kVariant>
LaunchFn new_fn_v(int threads) {
    switch (threads) {
    case 1: return new_if_compiled<T, 1, kV, kVariant>();
    case 2: return new_if_compiled<T, 2, kV, kVariant>();
    case 4: return new_if_compiled<T, 4, kV, kVariant>();
    case 8: return new_if_compiled<T, 8, kV, kVariant>();
    case 16: return new_if_compiled<T, 16, kV, kVariant>();
    case 32: return new_if_compiled<T, 32, kV, kVariant>();
    case 64: return new_if_compiled<T, 64, kV, kVariant>();
    case 128: return new_if_compiled<T, 128, kV, kVariant>();
    case 256: return new_if_compiled<T, 256, kV, kVariant>();
    case 512: return new_if_compiled<T, 512, kV, kVariant>();
    case 1024: return new_if_compiled<T, 1024, kV, kVariant>();
    default: return nullptr;
    }
}
template <typename T, int kVariant>
LaunchFn new_fn_variant(int threads, int vecs) {
    switch (vecs) {
    case 1: return new_fn_v<T, 1, kVariant>(threads);
    case 2: return new_fn_v<T, 2, kVariant>(threads);
    case 4: return new_fn_v<T, 4, kVariant>(threads);
    case 8: return new_fn_v<T, 8, kVariant>(threads);
    default: return nullptr;
    }
}
template <typename T>
LaunchFn new_fn(int threads, int vecs, int variant = 0) {
    switch (variant) {
    case 0: return new_fn_variant<T, 0>(threads, vecs);
    case 1: return new_fn_variant<T, 1>(threads, vecs);
    case 2: return new_fn_variant<T, 2>(threads, vecs);
    case 3: return new_fn_variant<T, 3>(threads, vecs);
    case 4: return new_fn_variant<T, 4>(threads, vecs);
    default: return nullptr;
    }
}

// ---- Persistent candidates ------------------------------------------------------------
// The library kernel's persistent feeds (rows_registers.cuh: a grid of the
// blocks resident at once, each group looping over rows, its next row in a
// second register set, Feed::kPersistent, or in a shared-memory ring of two
// stages, Feed::kPersistentRing), here on SMs x (resident blocks / kFrac)
// blocks.
template <typename T, int kT, int kV, sm::Feed kFeed, int kFrac>
void launch_pers(const void *in, void *out, int64_t rows, int64_t L, cudaStream_t s) {
    const OuterIndex ix = rows_index(L);
    auto *kernel = sm::register_rows_kernel<T, kT, kV, 0, kFeed>(rows, L, true, ix);
    static int sms = 0;
    if (sms == 0) CK(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, 0));
    int resident = 0;
    CK(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&resident, kernel, sm::register_rows_block<kT>(), 0));
    const int64_t max_blocks = int64_t(sms) * std::max(1, resident / kFrac);
    sm::launch_register_rows<T, kT, kV, 0, kFeed>(static_cast<const T *>(in), static_cast<T *>(out), rows, L, true,
                                                  ix, s, max_blocks);
}
// The persistent candidates: 0 registers, 1 registers at half the resident
// blocks, 2 a ring of two stages.
constexpr int kPersVariants = 3;
const char *const kPersNames[kPersVariants] = {"pers", "pers half", "pers ring2"};
template <typename T, int kT, int kV>
LaunchFn pers_if_compiled(int variant) {
    constexpr int P = oprt::gpu::vector_width<T>();
    constexpr sm::Feed kRegisters = sm::Feed::kPersistent, kRing = sm::Feed::kPersistentRing;
    if constexpr (kV * P <= 32 && int64_t(kT) * kV * P <= kMaxPersCols) {
        // A ring within 47 KiB of static shared memory (48 KiB at most, beside the reduction slots).
        constexpr int64_t kRingBytes = int64_t(kV) * sm::register_rows_block<kT>() * 16;
        switch (variant) {
        case 0: return &launch_pers<T, kT, kV, kRegisters, 1>;
        case 1: return &launch_pers<T, kT, kV, kRegisters, 2>;
        case 2:
            if constexpr (2 * kRingBytes <= 47 * 1024) return &launch_pers<T, kT, kV, kRing, 1>;
            return nullptr;
        default: return nullptr;
        }
    } else {
        return nullptr;
    }
}
template <typename T, int kV>
LaunchFn pers_fn_v(int threads, int variant) {
    switch (threads) {
    case 4: return pers_if_compiled<T, 4, kV>(variant);
    case 8: return pers_if_compiled<T, 8, kV>(variant);
    case 16: return pers_if_compiled<T, 16, kV>(variant);
    case 32: return pers_if_compiled<T, 32, kV>(variant);
    case 64: return pers_if_compiled<T, 64, kV>(variant);
    case 128: return pers_if_compiled<T, 128, kV>(variant);
    case 256: return pers_if_compiled<T, 256, kV>(variant);
    case 512: return pers_if_compiled<T, 512, kV>(variant);
    case 1024: return pers_if_compiled<T, 1024, kV>(variant);
    default: return nullptr;
    }
}
template <typename T>
LaunchFn pers_fn(int threads, int vecs, int variant) {
    switch (vecs) {
    case 1: return pers_fn_v<T, 1>(threads, variant);
    case 2: return pers_fn_v<T, 2>(threads, variant);
    case 4: return pers_fn_v<T, 4>(threads, variant);
    case 8: return pers_fn_v<T, 8>(threads, variant);
    default: return nullptr;
    }
}

// QuACK's softmax shape, as its source reads: blocks of 128 threads, threads
// a row by row length (8 up to 64 columns, 16 up to 128, 32 up to 3072, 64 up
// to 6144), each thread holding the row's 16-byte vectors over those threads,
// not rounded to a power of two (a warp holds a bf16 row of 2304 as 9 vectors
// a lane); its loads go through shared memory (cp.async), one row a group, a
// block per tile of rows. Here: rows_registers at that shape, plain and staged,
// and the persistent forms (registers; a ring of two where it fits in static
// shared memory) at that shape. Compiled for the bench's
// shapes' (threads, vectors) only.
int quack_threads(int64_t L) { return L <= 64 ? 8 : L <= 128 ? 16 : L <= 3072 ? 32 : L <= 6144 ? 64 : 0; }
constexpr int kQuackVariants = 4;
const char *const kQuackNames[kQuackVariants] = {"quack", "quack staged", "pers quack", "pers ring2 quack"};
template <typename T, int kT, int kV>
LaunchFn quack_variant(int variant) {
    switch (variant) {
    case 0: return &launch_new<T, kT, kV, 0>;
    case 1:
        if constexpr (int64_t(kV) * sm::register_rows_block<kT>() * 16 <= 47 * 1024) return &launch_new<T, kT, kV, 2>;
        return nullptr;
    case 2: return &launch_pers<T, kT, kV, sm::Feed::kPersistent, 1>;
    case 3:
        if constexpr (2 * int64_t(kV) * sm::register_rows_block<kT>() * 16 <= 47 * 1024)
            return &launch_pers<T, kT, kV, sm::Feed::kPersistentRing, 1>;
        return nullptr;
    default: return nullptr;
    }
}
template <typename T>
LaunchFn quack_fn(int threads, int vecs, int variant) {
    const int tv = threads * 1000 + vecs;
    if constexpr (sizeof(T) == 4) {
        switch (tv) {
        case 16002: return quack_variant<T, 16, 2>(variant);     // 128
        case 32008: return quack_variant<T, 32, 8>(variant);     // 1024
        case 32010: return quack_variant<T, 32, 10>(variant);    // 1280
        case 32012: return quack_variant<T, 32, 12>(variant);    // 1536
        case 32018: return quack_variant<T, 32, 18>(variant);    // 2304
        case 64015: return quack_variant<T, 64, 15>(variant);    // 3840
        case 64016: return quack_variant<T, 64, 16>(variant);    // 4096
        default: return nullptr;
        }
    } else {
        switch (tv) {
        case 16001: return quack_variant<T, 16, 1>(variant);     // 128
        case 32004: return quack_variant<T, 32, 4>(variant);     // 1024
        case 32005: return quack_variant<T, 32, 5>(variant);     // 1280
        case 32006: return quack_variant<T, 32, 6>(variant);     // 1536
        case 32009: return quack_variant<T, 32, 9>(variant);     // 2304
        case 64008: return quack_variant<T, 64, 8>(variant);     // 3840, 4096
        default: return nullptr;
        }
    }
}

struct Candidate {
    std::string name;
    int new_threads = 0, new_vecs = 0;  // the kernel's shape
    int new_min_blocks = 0;  // 0: no bound
    bool new_staged = false;
    LaunchFn fn = nullptr;
    SoftmaxPlan plan;  // the library (plan.desc set), else fn
};

template <typename T>
void launch(const Candidate &c, const void *in, void *out, int64_t rows, int64_t L) {
    if (c.plan.desc != nullptr) {
        execute_softmax_plan(c.plan, in, out, g_stream);
    } else {
        c.fn(in, out, rows, L, g_stream);
    }
}

int64_t next_pow2(int64_t v) {
    int64_t p = 1;
    while (p < v) p <<= 1;
    return p;
}

template <typename T>
std::vector<Candidate> candidates(int64_t L) {
    constexpr int P = oprt::gpu::vector_width<T>();
    const int64_t nvec = (L + P - 1) / P;
    std::vector<Candidate> list;
    char name[64];
    // Triton's shape: 128 threads a row up to 2048 columns, 256 beyond; the row padded to a power of two.
    const int tri_threads = L <= 2048 ? 128 : 256;
    const int tri_vecs = int(std::max<int64_t>(1, next_pow2(L) / P / tri_threads));
    bool tri_listed = false;
    for (int v : {1, 2, 4, 8}) {
        const int threads = int(next_pow2((nvec + v - 1) / v));
        for (int variant = 0; variant < kVariants; ++variant) {
            Candidate c;
            c.fn = new_fn<T>(threads, v, variant);  // null where variant_taken says no
            if (c.fn == nullptr) continue;
            c.new_threads = threads;
            c.new_vecs = v;
            c.new_min_blocks = variant_min_blocks(threads <= 32 ? 128 : threads, variant);  // register_rows_block
            c.new_staged = (variant & 2) != 0;
            const bool tri = variant == 0 && threads == tri_threads && v == tri_vecs;
            tri_listed = tri_listed || tri;
            char extra[32] = "";
            if (c.new_min_blocks > 0) std::snprintf(extra, sizeof extra, " b%d", c.new_min_blocks);
            std::snprintf(name, sizeof name, "new t%d v%d%s%s%s", threads, v, extra, c.new_staged ? " staged" : "",
                          tri ? " triton" : "");
            c.name = name;
            list.push_back(c);
        }
    }
    for (int v : {1, 2, 4, 8}) {
        const int threads = int(std::max<int64_t>(4, next_pow2((nvec + v - 1) / v)));
        for (int variant = 0; variant < kPersVariants; ++variant) {
            Candidate c;
            c.fn = pers_fn<T>(threads, v, variant);
            if (c.fn == nullptr) continue;
            std::snprintf(name, sizeof name, "%s t%d v%d", kPersNames[variant], threads, v);
            c.name = name;
            list.push_back(c);
        }
    }
    if (const int qt = quack_threads(L); qt > 0) {
        const int qv = int((nvec + qt - 1) / qt);
        for (int variant = 0; variant < kQuackVariants; ++variant) {
            Candidate c;
            c.fn = quack_fn<T>(qt, qv, variant);
            if (c.fn == nullptr) continue;
            std::snprintf(name, sizeof name, "%s t%d v%d", kQuackNames[variant], qt, qv);
            c.name = name;
            list.push_back(c);
        }
    }
    if (!tri_listed) {
        Candidate c;
        c.fn = new_fn<T>(tri_threads, tri_vecs);
        c.new_threads = tri_threads;
        c.new_vecs = tri_vecs;
        std::snprintf(name, sizeof name, "new t%d v%d triton", tri_threads, tri_vecs);
        c.name = name;
        if (c.fn != nullptr) list.push_back(c);
    }
    return list;
}

// ---- Data and checks ------------------------------------------------------------------

// Whether every element of got is within the tests' tolerance of want
// (tests/cpp/nvidia/op_cases.h, softmax_tol); *worst: the largest relative
// error (1e30 for a NaN, an unwritten element).
template <typename T>
bool check(const std::vector<T> &got, const std::vector<double> &want, double *worst) {
    const int64_t n = int64_t(want.size());
    std::vector<int64_t> bad(std::thread::hardware_concurrency() + 1, 0);
    std::vector<double> w(bad.size(), 0.0);
    parallel_for(n, [&](int64_t b, int64_t e, int64_t k) {
        for (int64_t i = b; i < e; ++i) {
            const double g = to_float(got[size_t(i)]);
            const double err = std::fabs(g - want[size_t(i)]);
            if (!(err <= softmax_atol<T>() + softmax_rtol<T>() * std::fabs(want[size_t(i)]))) ++bad[size_t(k)];
            const double rel = std::isnan(err) ? 1e30 : want[size_t(i)] > 0 ? err / want[size_t(i)] : err;
            w[size_t(k)] = std::max(w[size_t(k)], rel);
        }
    });
    *worst = *std::max_element(w.begin(), w.end());
    return *std::max_element(bad.begin(), bad.end()) == 0;
}

struct Result {
    std::string shape, dtype, cond, plan_kernel, best, reg_best, pers_best;
    double plan_us = 0, best_us = 0, peer_us = 0, reg_us = 0, pers_us = 0;
    const char *peer_who = "";
};
std::vector<Result> g_results;

// The new kernel's best shape for a case, hot and dram times added, against the plan's.
struct Suggestion {
    int64_t esize, rows, cols;
    std::string dtype;
    double plan_us, new_us;  // hot + dram
    int threads, vecs, min_blocks;
    bool staged;
};
std::vector<Suggestion> g_suggestions;
int g_sms = 0;

template <typename T>
void run_case(int64_t rows, int64_t L) {
    const int64_t n = rows * L;
    const size_t bytes = size_t(n) * sizeof(T);
    const size_t pitch = (bytes + 255) / 256 * 256;
    const int64_t sets = std::max<int64_t>(1, (kDramBytes + 2 * int64_t(bytes) - 1) / (2 * int64_t(bytes)));
    char shape[32];
    std::snprintf(shape, sizeof shape, "%lldx%lld", (long long)rows, (long long)L);
    std::printf("\n== %s %s: %.2f MiB moved a call, %lld sets for dram\n", shape, dtype_name<T>(),
                2.0 * double(bytes) / (1 << 20), (long long)sets);
    std::fflush(stdout);

    // Inputs: uniform in [-8, 8], rounded to T; every set a copy of the first.
    std::vector<T> host(static_cast<size_t>(n));
    {
        std::mt19937 rng(uint32_t(rows * 131 + L));
        std::uniform_real_distribution<float> uni(-8.0f, 8.0f);
        for (auto &v : host) v = from_float<T>(uni(rng));
    }
    char *in = nullptr, *out = nullptr;
    CK(cudaMalloc(&in, pitch * size_t(sets)));
    CK(cudaMalloc(&out, pitch * size_t(sets)));
    CK(cudaMemcpy(in, host.data(), bytes, cudaMemcpyHostToDevice));
    for (int64_t k = 1; k < sets; k *= 2)  // sets [0, k) copied to [k, 2k)
        CK(cudaMemcpy(in + k * pitch, in, size_t(std::min(k, sets - k)) * pitch, cudaMemcpyDeviceToDevice));

    // The float64 reference.
    std::vector<double> want(static_cast<size_t>(n));
    parallel_for(rows, [&](int64_t b, int64_t e, int64_t) {
        for (int64_t r = b; r < e; ++r) {
            softmax_reference_row(host.data() + r * L, L, [&](int64_t k, double y) { want[size_t(r * L + k)] = y; });
        }
    });

    std::vector<Candidate> list;
    {
        Candidate c;
        c.plan = make_softmax_plan<T>(in, out, rows, L);
        c.name = "plan " + c.plan.kernel;
        list.push_back(c);
    }
    for (const Candidate &c : candidates<T>(L)) list.push_back(c);

    std::vector<T> got(static_cast<size_t>(n));
    std::vector<double> hot_us(list.size(), -1), dram_us(list.size(), -1);
    for (size_t i = 0; i < list.size(); ++i) {
        const Candidate &c = list[i];
        CK(cudaMemsetAsync(out, 0xFF, bytes, g_stream));  // NaN in every dtype
        launch<T>(c, in, out, rows, L);
        const cudaError_t launched = cudaGetLastError();  // a shape this GPU cannot launch: skipped
        if (launched != cudaSuccess) {
            std::printf("  FAIL %-24s launch: %s: not timed\n", c.name.c_str(), cudaGetErrorString(launched));
            continue;
        }
        CK(cudaStreamSynchronize(g_stream));
        CK(cudaMemcpy(got.data(), out, bytes, cudaMemcpyDeviceToHost));
        double worst = 0;
        if (!check(got, want, &worst)) {
            std::printf("  FAIL %-24s max relative error %.3g (rtol %.0e): not timed\n", c.name.c_str(), worst,
                        softmax_rtol<T>());
            continue;
        }
        hot_us[i] = 1e6 * graph_seconds_per_launch([&] { launch<T>(c, in, out, rows, L); }, g_stream, g_hot_launches,
                                                   kHotReplays);
        if (sets > 1) {
            int64_t k = 0;
            const int launches = int(sets >= kDramMinLaunches ? sets : sets * ((kDramMinLaunches + sets - 1) / sets));
            dram_us[i] = 1e6 * graph_seconds_per_launch(
                                   [&] {
                                       const int64_t set = k++ % sets;
                                       launch<T>(c, in + set * pitch, out + set * pitch, rows, L);
                                   },
                                   g_stream, launches, kDramReplays);
        } else {
            dram_us[i] = hot_us[i];
        }
    }

    {
        Suggestion g{int64_t(sizeof(T)), rows, L, dtype_name<T>(), hot_us[0] + dram_us[0], 0, 0, 0, 0, false};
        for (size_t i = 1; i < list.size(); ++i)
            if (list[i].new_threads > 0 && hot_us[i] > 0 && (g.new_us == 0 || hot_us[i] + dram_us[i] < g.new_us)) {
                g.new_us = hot_us[i] + dram_us[i];
                g.threads = list[i].new_threads;
                g.vecs = list[i].new_vecs;
                g.min_blocks = list[i].new_min_blocks;
                g.staged = list[i].new_staged;
            }
        g_suggestions.push_back(g);
    }
    const Peer *peer = nullptr;
    if (std::is_same<T, __nv_bfloat16>::value)
        for (const Peer &p : kPeersBf16)
            if (p.rows == rows && p.cols == L) peer = &p;
    for (int cond = 0; cond < (sets > 1 ? 2 : 1); ++cond) {
        const std::vector<double> &us = cond == 0 ? hot_us : dram_us;
        Result r;
        r.shape = shape;
        r.dtype = dtype_name<T>();
        r.cond = sets > 1 ? (cond == 0 ? "hot" : "dram") : "both";
        r.plan_kernel = list[0].name.substr(5);
        r.plan_us = us[0];
        size_t best = 0;
        for (size_t i = 1; i < list.size(); ++i)
            if (us[i] > 0 && (us[best] <= 0 || us[i] < us[best])) best = i;
        r.best = list[best].name;
        r.best_us = us[best];
        if (peer != nullptr) {
            r.peer_us = cond == 0 ? peer->hot : peer->dram;
            r.peer_who = cond == 0 ? peer->hot_who : peer->dram_who;
        }
        std::printf("  %-4s plan %s %.2f us | best %s %.2f us (plan/best %.2fx)", r.cond.c_str(),
                    r.plan_kernel.c_str(), r.plan_us, r.best.c_str(), r.best_us, r.plan_us / r.best_us);
        if (peer != nullptr)
            std::printf(" | peer %s %.2f us (peer/best %.2fx)", r.peer_who, r.peer_us, r.peer_us / r.best_us);
        // The fastest one-row-a-group launch (rows_registers' loop) against the fastest persistent one.
        size_t reg = 0, per = 0;
        for (size_t i = 1; i < list.size(); ++i) {
            if (us[i] <= 0) continue;
            size_t &b = list[i].name.compare(0, 4, "pers") == 0 ? per : reg;
            if (b == 0 || us[i] < us[b]) b = i;
        }
        if (reg > 0 && per > 0) {
            r.reg_best = list[reg].name;
            r.reg_us = us[reg];
            r.pers_best = list[per].name;
            r.pers_us = us[per];
            std::printf("\n       one-row %s %.2f us | persistent %s %.2f us (one-row/persistent %.2fx)",
                        r.reg_best.c_str(), r.reg_us, r.pers_best.c_str(), r.pers_us, r.reg_us / r.pers_us);
        }
        std::printf("\n       ");
        for (size_t i = 1; i < list.size(); ++i)
            if (us[i] > 0) std::printf(" %s %.2f;", list[i].name.c_str(), us[i]);
        std::printf("\n");
        g_results.push_back(r);
    }
    std::fflush(stdout);

    for (Candidate &c : list) destroy_softmax_plan(c.plan);
    CK(cudaFree(in));
    CK(cudaFree(out));
}

}  // namespace

int main(int argc, char **argv) {
    std::string dtypes, shapes;
    for (int i = 1; i + 1 < argc; i += 2) {
        if (std::strcmp(argv[i], "--dtype") == 0) dtypes = argv[i + 1];
        else if (std::strcmp(argv[i], "--shape") == 0) shapes = argv[i + 1];
        else if (std::strcmp(argv[i], "--hot-launches") == 0) g_hot_launches = std::max(1, std::atoi(argv[i + 1]));
        else {
            std::printf("usage: %s [--dtype f32,f16,bf16] [--shape ROWSxCOLS,...] [--hot-launches N]\n", argv[0]);
            return 2;
        }
    }
    const auto start = std::chrono::steady_clock::now();
    int count = 0;
    if (cudaGetDeviceCount(&count) != cudaSuccess || count == 0) {
        std::printf("no CUDA device visible: nothing to measure\n");
        return 0;
    }
    cudaDeviceProp prop;
    CK(cudaGetDeviceProperties(&prop, 0));
    std::printf("device: %s, %d SMs, L2 %d MiB; library %s\n", prop.name, prop.multiProcessorCount,
                prop.l2CacheSize >> 20, oprt_version());
    g_sms = prop.multiProcessorCount;
    oprt_set_backend(OPRT_BACKEND_NVIDIA);
    CK(cudaStreamCreateWithFlags(&g_stream, cudaStreamNonBlocking));
    for (const Shape &s : shapes_to_run(shapes)) {
        if (listed(dtypes, "f32")) run_case<float>(s.rows, s.cols);
        if (listed(dtypes, "f16")) run_case<__half>(s.rows, s.cols);
        if (listed(dtypes, "bf16")) run_case<__nv_bfloat16>(s.rows, s.cols);
    }
    std::printf("\n%-12s %-5s %-5s %-28s %9s %-24s %9s %9s %s\n", "shape", "dtype", "cond", "plan", "plan us",
                "best candidate", "best us", "plan/best", "peer (bf16, 2026-12-05 record)");
    for (const Result &r : g_results) {
        std::printf("%-12s %-5s %-5s %-28s %9.2f %-24s %9.2f %8.2fx", r.shape.c_str(), r.dtype.c_str(),
                    r.cond.c_str(), r.plan_kernel.c_str(), r.plan_us, r.best.c_str(), r.best_us,
                    r.plan_us / r.best_us);
        if (r.peer_us > 0) std::printf(" %s %.2f us (%.2fx best)", r.peer_who, r.peer_us, r.peer_us / r.best_us);
        std::printf("\n");
    }
    std::printf("\n%-12s %-5s %-5s %9s %-28s %9s %-28s %9s\n", "shape", "dtype", "cond", "plan us",
                "best one-row (rows_registers)", "us", "best persistent", "us");
    for (const Result &r : g_results)
        if (r.pers_us > 0)
            std::printf("%-12s %-5s %-5s %9.2f %-28s %9.2f %-28s %9.2f %.2fx\n", r.shape.c_str(), r.dtype.c_str(),
                        r.cond.c_str(), r.plan_us, r.reg_best.c_str(), r.reg_us, r.pers_best.c_str(), r.pers_us,
                        r.reg_us / r.pers_us);
    // kRegisterRows entries (ops/softmax/nvidia/softmax_cuda.cu) that would give
    // each case where a shape beats the plan by more than 2% (hot + dram) that
    // shape: a starting point (min_cols is the band's lower end, left to the
    // reader); f16 and bf16 share their entries (esize 2), and an entry takes
    // every shorter row of its band within its row bound too.
    std::printf("\nkRegisterRows entries where a shape beats the plan by > 2%% (hot + dram), "
                "{esize, min_cols, max_cols, max_rows_per_sm, threads, vecs, min_blocks, stages}:\n");
    std::vector<Suggestion> sorted = g_suggestions;
    std::sort(sorted.begin(), sorted.end(), [](const Suggestion &a, const Suggestion &b) {
        return a.esize != b.esize ? a.esize > b.esize : a.cols != b.cols ? a.cols < b.cols : a.rows < b.rows;
    });
    for (const Suggestion &g : sorted) {
        const int64_t per_sm = (g.rows + g_sms - 1) / g_sms;
        if (g.new_us > 0 && (g.plan_us < 0 || g.plan_us > 1.02 * g.new_us))  // plan < 0: it failed its check
            std::printf("    {%lld, ?, %lld, %lld, %d, %d, %d, %d},  // %s %lldx%lld: %.2f -> %.2f us (hot + dram)\n",
                        (long long)g.esize, (long long)g.cols, (long long)per_sm, g.threads, g.vecs, g.min_blocks,
                        g.staged ? 1 : 0, g.dtype.c_str(), (long long)g.rows, (long long)g.cols, g.plan_us,
                        g.new_us);
        else
            std::printf("    // %s %lldx%lld: keep the plan (%.2f us; the best shape %.2f, t%d v%d b%d%s)\n",
                        g.dtype.c_str(), (long long)g.rows, (long long)g.cols, g.plan_us, g.new_us, g.threads, g.vecs,
                        g.min_blocks, g.staged ? " staged" : "");
    }
    CK(cudaStreamDestroy(g_stream));
    std::printf("\n%.0f s\n", std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count());
    return 0;
}
