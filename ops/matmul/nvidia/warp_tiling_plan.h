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
};
constexpr int kWarpTilingConfigCount = int(sizeof(kWarpTilingConfigs) / sizeof(kWarpTilingConfigs[0]));

// The first row whose max_m holds picks the config. K is then split until the blocks
// (tiles x pieces) reach fill x SMs, at most max_splits pieces, each at least
// kMinSplitDepth deep.
struct WarpTilingPlanRow {
    int64_t max_m;
    int config;
    int max_splits;
    int fill;  // blocks per SM to aim for
};
constexpr int64_t kWarpTilingAnyM = int64_t(1) << 62;
constexpr int64_t kMinSplitDepth = 256;
constexpr WarpTilingPlanRow kWarpTilingPlan[] = {
    {16, 3, 16, 4},              // 16 x 4096 x 4096: 32 tiles, 16 pieces (more loads in flight)
    {32, 2, 16, 4},
    {64, 1, 16, 3},              // 64 x 4096 x 4096: 32 tiles, 12 pieces
    {kWarpTilingAnyM, 0, 8, 1},  // 128 x 4096 x 4096: 8 pieces; 1024^3: 4; from 2048^3 on: 1
};

struct WarpTilingChoice {
    int config = 0;
    int splits = 1;
};

inline WarpTilingChoice warp_tiling_choose(int64_t m, int64_t n, int64_t k, int sms) {
    WarpTilingChoice c;
    for (const WarpTilingPlanRow &row : kWarpTilingPlan) {
        if (m > row.max_m) continue;
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
