// The plan of the production SIMT kernel (warp_tiling, kernel.cuh): which block-tile
// configurations the library compiles, and which one, with how many K pieces summed
// how, runs a shape. Plain host code, shared by the NVIDIA and MetaX plans
// (matmul_cuda.cu) and the f32 benchmark (tests/cpp/nvidia/bench/sgemm_kernels.cu),
// which prints next to each shape's fastest candidate what this table picks.
//
// To adopt a configuration the benchmark found faster: copy its line into
// kWarpTilingConfigs (the benchmark prints it in this form) and point a row of
// kWarpTilingPlan at its index.
#pragma once

#include <cstdint>

namespace oprt::matmul {

// Block tile BM x BN x BK, warp tile WM x WN, lane tile TM x TN, blocks per SM that the
// register budget is sized for, and how slices of A and B reach shared memory: stages 0
// loads the next slice into registers while this one is computed (two buffers), stages
// S >= 2 keeps a ring of S buffers filled by asynchronous copies (f32 only; f16 / bf16
// take the register form) (kernel.cuh: WarpTiling).
struct WarpTilingShape {
    int bm, bn, bk, wm, wn, tm, tn, min_blocks, stages;
};

// The configurations compiled into the library, by index.
constexpr WarpTilingShape kWarpTilingConfigs[] = {
    {128, 256, 8, 64, 64, 8, 16, 1, 0},  // 0: large products; 256 threads, 8 x 16 a lane, one block an SM
    {64, 128, 16, 64, 32, 8, 8, 3, 0},   // 1: M <= 64, and K split for fewer tiles than SMs
    {32, 128, 16, 32, 32, 4, 8, 4, 0},   // 2: M <= 32
    {16, 128, 16, 16, 32, 4, 4, 4, 0},   // 3: M <= 16: B streamed once, K split to fill the SMs
    {32, 64, 16, 32, 16, 4, 4, 4, 0},    // 4: small products (a few tiles of any larger config)
};
constexpr int kWarpTilingConfigCount = int(sizeof(kWarpTilingConfigs) / sizeof(kWarpTilingConfigs[0]));

// The first row whose max_m and max_mn hold picks the config. K is then split until
// the blocks (tiles x pieces) reach fill x SMs, at most max_splits pieces, each at least
// kMinSplitDepth deep. cluster: the pieces of a tile run as one thread-block cluster and
// add their partial tiles through distributed shared memory (one kernel, no workspace)
// where the device has clusters and at most kMaxClusterPieces pieces; otherwise (and
// where cluster is false) each piece writes an f32 partial tile to the workspace and a
// second kernel adds them.
struct WarpTilingPlanRow {
    int64_t max_m;   // rows of C at most
    int64_t max_mn;  // elements of C (M x N) at most
    int config;
    int max_splits;
    int fill;  // blocks per SM to aim for
    bool cluster;
};
constexpr int64_t kWarpTilingAny = int64_t(1) << 62;
constexpr int64_t kMinSplitDepth = 256;
constexpr int kMaxClusterPieces = 16;  // above 8: the non-portable cluster sizes (sm_90)
constexpr WarpTilingPlanRow kWarpTilingPlan[] = {
    {16, kWarpTilingAny, 3, 16, 4, true},              // 16 x 4096 x 4096: 32 tiles, 16 pieces
    {32, kWarpTilingAny, 2, 16, 4, true},
    {64, kWarpTilingAny, 1, 16, 3, true},              // 64 x 4096 x 4096: 32 tiles, 12 pieces
    {kWarpTilingAny, 1 << 16, 4, 16, 4, true},         // 33 x 65 x 17, 130 x 260 x 1000
    {128, kWarpTilingAny, 0, 8, 1, true},              // 128 x 4096 x 4096: 16 tiles, 8 pieces
    {kWarpTilingAny, kWarpTilingAny, 0, 8, 1, true},   // 1024^3: 4 pieces; from 2048^3 on: 1
};

// The K split actually run for a request of `splits` pieces of a BK-sliced K: each piece
// a whole number of slices, none empty. pieces == 1: K is not split.
struct SplitShape {
    int64_t k_piece;
    int pieces;
};
inline SplitShape split_shape(int64_t k, int bk, int splits) {
    const int64_t slices = (k + bk - 1) / bk;
    if (splits <= 1 || slices <= 1) return {k, 1};
    const int64_t want = splits < slices ? splits : slices;
    const int64_t per = (slices + want - 1) / want * bk;
    return {per, int((k + per - 1) / per)};
}

struct WarpTilingChoice {
    int config = 0;
    int splits = 1;
    bool cluster = false;  // the pieces (more than one) summed in a cluster
};

// clusters: whether this device and build can run cluster kernels (the caller may still
// turn `cluster` off where a cluster of that size does not fit).
inline WarpTilingChoice warp_tiling_choose(int64_t m, int64_t n, int64_t k, int sms, bool clusters) {
    WarpTilingChoice c;
    for (const WarpTilingPlanRow &row : kWarpTilingPlan) {
        if (m > row.max_m || m * n > row.max_mn) continue;
        const WarpTilingShape &s = kWarpTilingConfigs[row.config];
        const int64_t tiles = ((m + s.bm - 1) / s.bm) * ((n + s.bn - 1) / s.bn);
        int64_t splits = tiles > 0 ? int64_t(row.fill) * sms / tiles : 1;
        if (splits > row.max_splits) splits = row.max_splits;
        if (splits > k / kMinSplitDepth) splits = k / kMinSplitDepth;
        c.config = row.config;
        c.splits = splits < 1 ? 1 : int(splits);
        const int pieces = split_shape(k, s.bk, c.splits).pieces;
        c.cluster = row.cluster && clusters && pieces > 1 && pieces <= kMaxClusterPieces;
        return c;
    }
    return c;
}

}  // namespace oprt::matmul
