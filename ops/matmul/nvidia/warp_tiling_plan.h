// The plan of the production SIMT kernel (warp_tiling, kernel.cuh): which block-tile
// configurations the library compiles, and which one, with how many K pieces, runs a
// shape. Plain host code, shared by the NVIDIA and MetaX plans (matmul_cuda.cu) and
// the f32 benchmark (tests/cpp/nvidia/bench/sgemm_kernels.cu), which prints next to
// each shape's fastest candidate what this table picks.
//
// To adopt a configuration the benchmark found faster: copy its line into
// kWarpTilingConfigs (the benchmark prints it in this form) and point a row of
// kWarpTilingPlan at its index.
#pragma once

#include <cstdint>

namespace oprt::matmul {

// Block tile BM x BN x BK, warp tile WM x WN, lane tile TM x TN, blocks per SM that the
// register budget is sized for (kernel.cuh: WarpTiling).
struct WarpTilingShape {
    int bm, bn, bk, wm, wn, tm, tn, min_blocks;
};

// The configurations compiled into the library, by index (each one's measurements against
// cuBLAS SGEMM: docs/kernels/matmul.md, "The NVIDIA SIMT ladder", `warp_tiling` in detail).
constexpr WarpTilingShape kWarpTilingConfigs[] = {
    {128, 128, 8, 32, 64, 8, 8, 2},   // 0: large products; 256 threads, 8 x 8 a lane, two blocks an SM
    {64, 128, 8, 64, 32, 8, 8, 3},    // 1: M <= 64
    {32, 128, 16, 32, 32, 4, 8, 4},   // 2: M <= 32
    {16, 128, 16, 16, 32, 4, 4, 4},   // 3: M <= 16: B streamed once, K split to fill the SMs
    {32, 64, 16, 32, 16, 4, 4, 4},    // 4: small products: more tiles, so more blocks, than the larger configs
};
constexpr int kWarpTilingConfigCount = int(sizeof(kWarpTilingConfigs) / sizeof(kWarpTilingConfigs[0]));

// The first row whose max_m and max_mn hold picks the config. K is then split until
// the blocks (tiles x pieces) reach fill x SMs, at most max_splits pieces, each at least
// kMinSplitDepth deep. A row marked `yield` is passed over when its blocks, so split,
// still fill under three quarters of the SMs' block slots (SMs x the config's blocks an
// SM): a big tile on a mid-size product (512^3, 257 x 256 x 256) leaves SMs idle, and
// the last row's 32 x 64 tile runs more blocks.
//
// Small products (M x N at most 2^16) take the 32 x 64 tile whatever M is: they run a
// few blocks, so their time is one block's, and a lane of the 32 x 64 tile sums 4 x 4
// outputs where one of the 64 x 128 tile sums 8 x 8, over up to four times as many
// blocks. The row sits after the M <= 16 row (a 16-row tile wastes fewer rows there) and
// before the 32- and 64-row rows, which keep the skinny products whose N is large
// (32 x 4096 and 64 x 4096 are above the bound). Up to 64 rows the 32 x 64 tile also wins
// to 3 x 2^16 outputs (64 x 4096 x 4096 stays on the 64 x 128 tile). Pieces at least 64
// deep, at most 8 for small products. The measurements behind each rule:
// docs/kernels/matmul.md, "The NVIDIA SIMT ladder", `warp_tiling` in detail.
struct WarpTilingPlanRow {
    int64_t max_m;   // rows of C at most
    int64_t max_mn;  // elements of C (M x N) at most
    int config;
    int max_splits;
    int fill;    // blocks per SM to aim for
    bool yield;  // passed over when its blocks fill under 3/4 of the SMs' slots
};
constexpr int64_t kWarpTilingAny = int64_t(1) << 62;
constexpr int64_t kMinSplitDepth = 64;
constexpr WarpTilingPlanRow kWarpTilingPlan[] = {
    {16, kWarpTilingAny, 3, 16, 4, false},              // 16 x 4096 x 4096: 32 tiles, 16 pieces (more loads in flight)
    {kWarpTilingAny, 1 << 16, 4, 8, 4, false},          // 33 x 65 x 17: 4 tiles, 1 piece; 256^3: 32 tiles, 4 pieces
    {32, kWarpTilingAny, 2, 16, 4, false},              // 17 x 4099 x 4093: 33 tiles, 16 pieces
    {64, 3 << 16, 4, 16, 4, false},                     // 64 x 2049 x 1024: 66 tiles, 8 pieces
    {64, kWarpTilingAny, 1, 16, 3, false},              // 64 x 4096 x 4096: 32 tiles, 12 pieces
    {128, kWarpTilingAny, 0, 8, 2, false},              // 128 x 4096 x 4096: 32 tiles, 8 pieces
    {kWarpTilingAny, 1 << 20, 0, 4, 2, true},           // 1024^3, 1024 x 1024 x 256: 64 tiles, 4 pieces
    {kWarpTilingAny, kWarpTilingAny, 0, 8, 2, true},    // from 2048^3 on: 1 piece
    {kWarpTilingAny, kWarpTilingAny, 4, 16, 4, false},  // 512^3: 128 tiles, 4 pieces; 257 x 256 x 256: 36, 4
};

struct WarpTilingChoice {
    int config = 0;
    int splits = 1;
};

inline WarpTilingChoice warp_tiling_choose(int64_t m, int64_t n, int64_t k, int sms) {
    WarpTilingChoice c;
    for (const WarpTilingPlanRow &row : kWarpTilingPlan) {
        if (m > row.max_m || m * n > row.max_mn) continue;
        const WarpTilingShape &s = kWarpTilingConfigs[row.config];
        const int64_t tiles = ((m + s.bm - 1) / s.bm) * ((n + s.bn - 1) / s.bn);
        int64_t splits = tiles > 0 ? int64_t(row.fill) * sms / tiles : 1;
        if (splits > row.max_splits) splits = row.max_splits;
        if (splits > k / kMinSplitDepth) splits = k / kMinSplitDepth;
        if (splits < 1) splits = 1;
        if (row.yield && 4 * tiles * splits < 3 * int64_t(sms) * s.min_blocks) continue;
        c.config = row.config;
        c.splits = int(splits);
        return c;
    }
    return c;
}

}  // namespace oprt::matmul
