// The plan table of the NVIDIA f32 SIMT matmul (ops/matmul/nvidia/warp_tiling_plan.h) is
// plain host code: its invariants are checked here on any machine, so an edited row or
// config that the GPU tests would only catch on a GPU fails at once. The kernels
// themselves are checked on the GPU (tests/cpp/nvidia/plan_paths_test.cc).
#include <gtest/gtest.h>

#include <cstdint>
#include <string>

#include "ops/matmul/nvidia/warp_tiling_plan.h"

namespace {
namespace om = oprt::matmul;

constexpr int kRows = int(sizeof(om::kWarpTilingPlan) / sizeof(om::kWarpTilingPlan[0]));

// The index of the config with this block tile, or -1.
int config_of(int bm, int bn) {
    for (int i = 0; i < om::kWarpTilingConfigCount; ++i)
        if (om::kWarpTilingConfigs[i].bm == bm && om::kWarpTilingConfigs[i].bn == bn) return i;
    return -1;
}

std::string shape_str(int64_t m, int64_t n, int64_t k) {
    return std::to_string(m) + " x " + std::to_string(n) + " x " + std::to_string(k);
}

TEST(WarpTilingPlan, RowsPointAtConfigsAndTheLastTakesAnything) {
    for (const om::WarpTilingPlanRow &row : om::kWarpTilingPlan) {
        EXPECT_GE(row.config, 0);
        EXPECT_LT(row.config, om::kWarpTilingConfigCount);
        EXPECT_GE(row.max_m, 1);
        EXPECT_GE(row.max_mn, 1);
        EXPECT_GE(row.max_splits, 1);
        EXPECT_GE(row.fill, 1);
    }
    const om::WarpTilingPlanRow &last = om::kWarpTilingPlan[kRows - 1];
    EXPECT_EQ(last.max_m, om::kWarpTilingAny);
    EXPECT_EQ(last.max_mn, om::kWarpTilingAny);
}

// Every row can be reached: a row before it that holds all its shapes must yield (be
// passed over when its tile leaves SMs idle), or it would always take them first.
TEST(WarpTilingPlan, NoRowIsShadowed) {
    for (int r = 1; r < kRows; ++r)
        for (int q = 0; q < r; ++q) {
            const om::WarpTilingPlanRow &before = om::kWarpTilingPlan[q], &row = om::kWarpTilingPlan[r];
            EXPECT_FALSE(before.max_m >= row.max_m && before.max_mn >= row.max_mn && !before.yield)
                << "row " << r << " is never picked: row " << q << " holds all its shapes";
        }
}

TEST(WarpTilingPlan, ConfigsAreWellFormed) {
    for (const om::WarpTilingShape &s : om::kWarpTilingConfigs) {
        SCOPED_TRACE(std::to_string(s.bm) + "x" + std::to_string(s.bn) + "x" + std::to_string(s.bk));
        EXPECT_EQ(s.bm % s.wm, 0);
        EXPECT_EQ(s.bn % s.wn, 0);
        EXPECT_EQ(s.wm % s.tm, 0);
        EXPECT_EQ(s.wn % s.tn, 0);
        EXPECT_EQ(s.tm % 4, 0) << "lane tiles are 4 x 4 sub-blocks";
        EXPECT_EQ(s.tn % 4, 0) << "lane tiles are 4 x 4 sub-blocks";
        EXPECT_EQ((s.wm / s.tm) * (s.wn / s.tn), 32) << "a warp tile has 32 lanes";
        EXPECT_TRUE(s.bk == 8 || s.bk == 16 || s.bk == 32);
        EXPECT_LE(2 * s.bk * (s.bm + s.bn) * 4, 48 * 1024) << "two buffers within static shared memory";
        EXPECT_GE(s.min_blocks, 1);
    }
}

// The choice over many shapes: a config of the table, pieces at least kMinSplitDepth
// deep, at most the row's max_splits.
TEST(WarpTilingPlan, ChoicesStayInBounds) {
    for (int sms : {1, 78, 132})
        for (int64_t m : {int64_t(1), int64_t(16), int64_t(17), int64_t(33), int64_t(64), int64_t(128), int64_t(130),
                          int64_t(4096)})
            for (int64_t n : {int64_t(1), int64_t(65), int64_t(260), int64_t(4096)})
                for (int64_t k : {int64_t(0), int64_t(17), int64_t(1000), int64_t(4096), int64_t(65536)}) {
                    SCOPED_TRACE(shape_str(m, n, k) + ", " + std::to_string(sms) + " SMs");
                    const om::WarpTilingChoice c = om::warp_tiling_choose(m, n, k, sms);
                    ASSERT_GE(c.config, 0);
                    ASSERT_LT(c.config, om::kWarpTilingConfigCount);
                    EXPECT_GE(c.splits, 1);
                    EXPECT_LE(c.splits, 16);
                    if (c.splits > 1) {
                        EXPECT_GE(k / c.splits, om::kMinSplitDepth);
                    }
                }
}

// Small products (M x N <= 2^16, any M above 16) take the 32 x 64 tile, K in at most 8 pieces.
TEST(WarpTilingPlan, SmallProductsTakeThe32x64Tile) {
    const int small = config_of(32, 64);
    ASSERT_GE(small, 0) << "no 32 x 64 config in the table";
    struct Case {
        int64_t m, n, k;
        int splits;  // on 132 SMs
    };
    for (const Case &c : {Case{33, 65, 17, 1}, Case{130, 260, 1000, 8}, Case{17, 1, 4096, 8}, Case{256, 256, 256, 4},
                          Case{1000, 65, 2048, 8}, Case{65536, 1, 100, 1}, Case{32, 2048, 2048, 8},
                          Case{64, 1024, 1024, 8}, Case{256, 256, 1024, 8}}) {
        SCOPED_TRACE(shape_str(c.m, c.n, c.k));
        const om::WarpTilingChoice got = om::warp_tiling_choose(c.m, c.n, c.k, 132);
        EXPECT_EQ(got.config, small);
        EXPECT_EQ(got.splits, c.splits);
    }
}

// The skinny products by M: M <= 16 the 16-row tile; 32 rows with M x N above 2^16 the
// 32-row tile; 33-64 rows the 32 x 64 tile up to 3 x 2^16 outputs (33 x 4096 too), the
// 64-row tile above;
// up to 128 rows the 128 x 128 tile. Larger products: the 128 x 128 tile, K in up to 4
// pieces up to 2^20 outputs; where that leaves SMs idle (yield), the 32 x 64 tile.
TEST(WarpTilingPlan, EachShapeClassGetsItsConfig) {
    const int t128 = config_of(128, 128), m64 = config_of(64, 128),
              m32 = config_of(32, 128), m16 = config_of(16, 128), small = config_of(32, 64);
    ASSERT_GE(t128, 0);
    ASSERT_GE(m64, 0);
    ASSERT_GE(m32, 0);
    ASSERT_GE(m16, 0);
    ASSERT_GE(small, 0);
    struct Case {
        int64_t m, n, k;
        int config, splits;  // on 132 SMs
    };
    for (const Case &c : {Case{16, 4096, 4096, m16, 16},     Case{1, 65, 17, m16, 1},
                          Case{16, 65536, 64, m16, 1},       Case{17, 4099, 4093, m32, 16},
                          Case{32, 4096, 4096, m32, 16},     Case{32, 4096, 2048, m32, 16},
                          Case{33, 4096, 4096, small, 4},     Case{64, 4096, 4096, m64, 12},
                          Case{64, 2048, 1024, small, 8},    Case{64, 2049, 1024, small, 8},
                          Case{128, 4096, 4096, t128, 8},    Case{1024, 1024, 1024, t128, 4},
                          Case{1000, 1001, 999, t128, 4},    Case{2048, 2048, 2048, t128, 1},
                          Case{4096, 4096, 4096, t128, 1},   Case{1024, 1024, 256, t128, 4},
                          Case{512, 512, 512, small, 4},     Case{257, 256, 256, small, 4}}) {
        SCOPED_TRACE(shape_str(c.m, c.n, c.k));
        const om::WarpTilingChoice got = om::warp_tiling_choose(c.m, c.n, c.k, 132);
        EXPECT_EQ(got.config, c.config);
        EXPECT_EQ(got.splits, c.splits);
    }
}

}  // namespace
