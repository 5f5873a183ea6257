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

TEST(WarpTilingPlan, RowsPointAtConfigsAndTheLastTakesAnything) {
    for (const om::WarpTilingPlanRow &row : om::kWarpTilingPlan) {
        EXPECT_GE(row.config, 0);
        EXPECT_LT(row.config, om::kWarpTilingConfigCount);
        EXPECT_GE(row.max_splits, 1);
        EXPECT_GE(row.fill, 1);
    }
    const om::WarpTilingPlanRow &last = om::kWarpTilingPlan[sizeof(om::kWarpTilingPlan) / sizeof(om::kWarpTilingPlan[0]) - 1];
    EXPECT_EQ(last.max_m, om::kWarpTilingAny);
    EXPECT_EQ(last.max_mn, om::kWarpTilingAny);
}

TEST(WarpTilingPlan, ConfigsAreWellFormed) {
    for (const om::WarpTilingShape &s : om::kWarpTilingConfigs) {
        SCOPED_TRACE(std::to_string(s.bm) + "x" + std::to_string(s.bn) + "x" + std::to_string(s.bk));
        EXPECT_EQ(s.bm % s.wm, 0);
        EXPECT_EQ(s.bn % s.wn, 0);
        EXPECT_EQ((s.wm / s.tm) * (s.wn / s.tn), 32) << "a warp tile has 32 lanes";
        EXPECT_TRUE(s.stages == 0 || s.stages >= 2);
        const int buffers = s.stages > 0 ? s.stages : 2;
        EXPECT_LE(buffers * s.bk * (s.bm + s.bn) * 4, 227 * 1024) << "shared buffers within an SM's";
    }
}

// split_shape: whole BK slices a piece, no empty piece, K covered.
TEST(WarpTilingPlan, SplitShapeCoversK) {
    for (int bk : {8, 16, 32})
        for (int64_t k : {int64_t(1), int64_t(7), int64_t(17), int64_t(256), int64_t(999), int64_t(4093), int64_t(4100)})
            for (int splits = 1; splits <= 20; ++splits) {
                const om::SplitShape s = om::split_shape(k, bk, splits);
                ASSERT_GE(s.pieces, 1);
                EXPECT_LE(s.pieces, splits);
                if (s.pieces > 1) EXPECT_EQ(s.k_piece % bk, 0);
                EXPECT_GE(s.k_piece * s.pieces, k) << "k " << k << " splits " << splits;
                EXPECT_LT(s.k_piece * (s.pieces - 1), k) << "k " << k << " splits " << splits << ": an empty piece";
            }
}

// The choice over many shapes: a config of the table; a cluster only where asked for,
// with 2 to kMaxClusterPieces pieces; pieces at least kMinSplitDepth deep.
TEST(WarpTilingPlan, ChoicesStayInBounds) {
    for (int sms : {1, 78, 132})
        for (int64_t m : {int64_t(1), int64_t(16), int64_t(17), int64_t(64), int64_t(128), int64_t(130), int64_t(4096)})
            for (int64_t n : {int64_t(1), int64_t(65), int64_t(260), int64_t(4096)})
                for (int64_t k : {int64_t(0), int64_t(17), int64_t(1000), int64_t(4096), int64_t(65536)})
                    for (bool clusters : {false, true}) {
                        const om::WarpTilingChoice c = om::warp_tiling_choose(m, n, k, sms, clusters);
                        ASSERT_GE(c.config, 0);
                        ASSERT_LT(c.config, om::kWarpTilingConfigCount);
                        EXPECT_GE(c.splits, 1);
                        const int pieces = om::split_shape(k, om::kWarpTilingConfigs[c.config].bk, c.splits).pieces;
                        if (c.splits > 1) EXPECT_GE(k / c.splits, om::kMinSplitDepth);
                        if (c.cluster) {
                            EXPECT_TRUE(clusters);
                            EXPECT_GE(pieces, 2);
                            EXPECT_LE(pieces, om::kMaxClusterPieces);
                        }
                    }
}

TEST(WarpTilingPlan, LargeProductsAreNotSplit) {
    const om::WarpTilingChoice c = om::warp_tiling_choose(4096, 4096, 4096, 132, true);
    EXPECT_EQ(c.splits, 1);
    EXPECT_FALSE(c.cluster);
}

}  // namespace
