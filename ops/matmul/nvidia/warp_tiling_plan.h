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

// The configurations compiled into the library, by index.
constexpr WarpTilingShape kWarpTilingConfigs[] = {
    {128, 256, 8, 64, 64, 8, 16, 1},  // 0: large products; 256 threads, 8 x 16 a lane, one block an SM
    {64, 128, 16, 64, 32, 8, 8, 3},   // 1: M <= 64, and K split for fewer tiles than SMs
    {32, 128, 16, 32, 32, 4, 8, 4},   // 2: M <= 32
    {16, 128, 16, 16, 32, 4, 4, 4},   // 3: M <= 16: B streamed once, K split to fill the SMs
    {32, 64, 16, 32, 16, 4, 4, 4},    // 4: small products: more tiles, so more blocks, than the larger configs
};
constexpr int kWarpTilingConfigCount = int(sizeof(kWarpTilingConfigs) / sizeof(kWarpTilingConfigs[0]));

// The first row whose max_m and max_mn hold picks the config. K is then split until
// the blocks (tiles x pieces) reach fill x SMs, at most max_splits pieces, each at least
// kMinSplitDepth deep.
//
// Small products (M x N at most 2^16) take the 32 x 64 tile whatever M is: they run a
// few blocks, so their time is one block's, and a lane of the 32 x 64 tile sums 4 x 4
// outputs where one of the 64 x 128 tile sums 8 x 8, over up to four times as many
// blocks. The row sits after the M <= 16 row (a 16-row tile wastes fewer rows there) and
// before the 32- and 64-row rows, which keep the skinny products whose N is large
// (32 x 4096 and 64 x 4096 are above the bound). Up to 64 rows the 32 x 64 tile also wins
// to 2^17 outputs (H200, 2026-12-02, camp_sgemm_bench --small: 64 x 2048 x 1024 in 4 pieces
// 16.3 us, 82.5% of cuBLAS, where the 64 x 128 tile took 24.0 us, 56.2%); 32 rows keep the
// 32 x 128 tile there (32 x 4096 x 2048: 95.4% against 91.5% for 32 x 64 in 4 pieces).
struct WarpTilingPlanRow {
    int64_t max_m;   // rows of C at most
    int64_t max_mn;  // elements of C (M x N) at most
    int config;
    int max_splits;
    int fill;  // blocks per SM to aim for
};
constexpr int64_t kWarpTilingAny = int64_t(1) << 62;
constexpr int64_t kMinSplitDepth = 256;
constexpr WarpTilingPlanRow kWarpTilingPlan[] = {
    {16, kWarpTilingAny, 3, 16, 4},              // 16 x 4096 x 4096: 32 tiles, 16 pieces (more loads in flight)
    {kWarpTilingAny, 1 << 16, 4, 16, 4},         // 33 x 65 x 17: 4 tiles, 1 piece; 130 x 260 x 1000: 25 tiles, 3
    {32, kWarpTilingAny, 2, 16, 4},
    {64, 1 << 17, 4, 16, 4},                     // 64 x 2048 x 1024: 64 tiles, 4 pieces
    {64, kWarpTilingAny, 1, 16, 3},              // 64 x 4096 x 4096: 32 tiles, 12 pieces
    {kWarpTilingAny, kWarpTilingAny, 0, 8, 1},   // 128 x 4096 x 4096: 8 pieces; 1024^3: 4; from 2048^3 on: 1
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
        c.config = row.config;
        c.splits = splits < 1 ? 1 : int(splits);
        return c;
    }
    return c;
}

}  // namespace oprt::matmul
