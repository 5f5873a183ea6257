// Every kernel variant of the nvidia backend (oprt_list_<op>_variants) against
// the float64 references of op_cases.h, on odd sizes, misaligned, strided and
// broadcast layouts, special values, and in every dtype. A variant may decline
// a layout it cannot run (OPRT_ERR_NOT_SUPPORTED, with a message naming it),
// but every variant must run the dense cases: declined() is checked there.
#include <string>
#include <vector>

#include "op_cases.h"

namespace nvt {
namespace {

class NvidiaVariants : public ::testing::Test {
protected:
    void SetUp() override { NVT_SKIP_WITHOUT_CUDA(); }
    NvidiaBackend backend_;
};

using ListFn = oprt_status_t (*)(oprt_backend_t, const char **, int, int *);

// The ladder of one operator on the nvidia backend, without "student" (an
// exercise is checked by scripts/camp.py check, not here).
std::vector<std::string> ladder(ListFn list) {
    int count = 0;
    EXPECT_EQ(list(OPRT_BACKEND_NVIDIA, nullptr, 0, &count), OPRT_SUCCESS) << oprt_last_error_message();
    std::vector<const char *> names(size_t(count > 0 ? count : 1));
    EXPECT_EQ(list(OPRT_BACKEND_NVIDIA, names.data(), count, &count), OPRT_SUCCESS);
    std::vector<std::string> out;
    for (int i = 0; i < count; ++i)
        if (std::string(names[size_t(i)]) != "student") out.push_back(names[size_t(i)]);
    EXPECT_GE(out.size(), 2u) << "a GPU ladder has a plain step and a fast one";
    return out;
}

// The plain steps' kernels carry the step's name (the fast steps' are the plan's).
bool plain_step(const std::string &v) {
    for (const char *p : {"scalar_grid_stride", "smem_tree", "warp_shuffle", "three_pass", "warp_fused", "online",
                          "naive", "smem_tiles", "blocking_1d", "blocking_2d", "vectorized", "warp_tiling"})
        if (v == p) return true;
    return false;
}

// Runs `dense` (cases every variant must run) and `any` (may be declined).
template <typename Dense, typename Any>
void for_each_variant(ListFn list, Dense dense, Any any) {
    for (const std::string &v : ladder(list)) {
        SCOPED_TRACE("variant " + v);
        UseVariant use(v.c_str());
        {
            ExpectKernel expect(plain_step(v) ? v.c_str() : nullptr);
            const int before = UseVariant::declined();
            dense();
            EXPECT_EQ(UseVariant::declined(), before) << "variant " << v << " declined a dense case";
        }
        any();
    }
}

TEST_F(NvidiaVariants, Elementwise) {
    const ListFn lists[] = {&oprt_list_copy_variants, &oprt_list_vector_add_variants, &oprt_list_relu_variants};
    const Ew ops[] = {Ew::kCopy, Ew::kAdd, Ew::kRelu};
    for (int k = 0; k < 3; ++k) {
        const Ew op = ops[k];
        for_each_variant(
            lists[k],
            [&] {
                for (oprt_dtype_t dt : all_dtypes()) {
                    for (int64_t n : {int64_t(1), int64_t(7), int64_t(1001), int64_t(65536 + 5)})
                        check_elementwise(op, dt, {{n}}, {{n}}, {{n}});
                    check_elementwise(op, dt, {{1001}, {}, 1}, {{1001}, {}, 1}, {{1001}, {}, 1});  // misaligned
                    check_elementwise(op, dt, {{257, 129}}, {{257, 129}}, {{257, 129}});
                    check_elementwise(op, dt, {{}}, {{}}, {{}});  // 0-d
                }
            },
            [&] {
                for (oprt_dtype_t dt : all_dtypes()) {
                    check_elementwise(op, dt, {{64, 33}}, {{64, 33}, {1, 64}}, {{64, 33}});  // transposed input
                    check_elementwise(op, dt, {{100}, {2}}, {{100}}, {{100}});              // strided output
                    check_elementwise(op, dt, {{257, 129}}, {{1, 129}}, {{257, 129}});      // row broadcast
                    check_elementwise(op, dt, {{17, 9}}, {{}}, {{17, 9}});                  // scalar broadcast
                    check_elementwise(op, dt, {{6, 5, 4}}, {{6, 5, 4}, {1, 48, 6}}, {{6, 5, 4}});
                }
            });
    }
}

TEST_F(NvidiaVariants, ReduceSum) {
    for_each_variant(
        &oprt_list_reduce_sum_variants,
        [&] {
            for (oprt_dtype_t dt : all_dtypes()) {
                for (int64_t L : {int64_t(1), int64_t(3), int64_t(33), int64_t(1001), int64_t(70001)})
                    check_reduce_sum(dt, {{5, L}}, 1);
                check_reduce_sum(dt, {{7, 1001}, {}, 1}, 1);      // misaligned rows
                check_reduce_sum(dt, {{3, 300001}}, 1);           // few long rows: the split
                check_reduce_sum(dt, {{2, 0}}, 1);                // empty axis: zeros
                check_reduce_sum(dt, {{4, 1000}}, 1, false, Fill::kUniform);
            }
        },
        [&] {
            for (oprt_dtype_t dt : all_dtypes()) {
                check_reduce_sum(dt, {{33, 17, 5}}, 1);               // inner axis
                check_reduce_sum(dt, {{1001, 3}}, 0);                 // first axis
                check_reduce_sum(dt, {{9, 31}, {1, 9}}, 1);           // strided axis
                check_reduce_sum(dt, {{3, 5, 7}}, 1, /*keepdims=*/true);
            }
        });
}

TEST_F(NvidiaVariants, Softmax) {
    for_each_variant(
        &oprt_list_softmax_variants,
        [&] {
            for (oprt_dtype_t dt : all_dtypes()) {
                for (int64_t L : {int64_t(1), int64_t(3), int64_t(33), int64_t(1001), int64_t(20001)})
                    check_softmax(dt, {{5, L}}, 1);
                check_softmax(dt, {{7, 1001}, {}, 1}, 1);          // misaligned rows
                check_softmax(dt, {{6, 129}}, 1, /*specials=*/true);
                check_softmax(dt, {{2, 70001}}, 1);                // longer than shared memory
            }
        },
        [&] {
            for (oprt_dtype_t dt : all_dtypes()) {
                check_softmax(dt, {{33, 17, 5}}, 1);               // inner axis
                check_softmax(dt, {{4, 6, 5}}, 1, /*specials=*/true);
                check_softmax(dt, {{9, 31}, {1, 9}}, 1);           // strided axis
            }
        });
}

// Every matmul step; dense cases have K and N multiples of 4 (the vector steps' rows).
TEST_F(NvidiaVariants, Matmul) {
    for_each_variant(
        &oprt_list_matmul_variants,
        [&] {
            // The tensor-core steps take f16/bf16 whose rows are whole 16-byte chunks (K and N
            // multiples of 8): those are their dense cases; the SIMT steps take every dtype.
            const std::string v = UseVariant::current();
            const bool tensor_cores = v == "mma_sync" || v == "wgmma";
            const std::vector<oprt_dtype_t> dtypes =
                tensor_cores ? std::vector<oprt_dtype_t>{OPRT_DTYPE_F16, OPRT_DTYPE_BF16} : all_dtypes();
            const std::vector<std::vector<int64_t>> shapes =
                tensor_cores ? std::vector<std::vector<int64_t>>{{1, 8, 8}, {7, 40, 24}, {129, 264, 136},
                                                                 {257, 64, 392}, {33, 1000, 8}, {300, 4104, 520},
                                                                 // under 64 rows: K split 8 ways, K whole, 4 ways
                                                                 {12, 4104, 72}, {20, 1032, 264}, {50, 2056, 136},
                                                                 // K in a pair of pieces summed in a cluster
                                                                 {64, 2056, 2104}, {37, 4104, 4096}}
                             : std::vector<std::vector<int64_t>>{{1, 4, 4}, {7, 36, 20}, {129, 260, 132},
                                                                 {257, 64, 388}, {33, 1000, 8}};
            for (oprt_dtype_t dt : dtypes)
                for (const auto &s : shapes) check_matmul(dt, {{s[0], s[1]}}, {{s[1], s[2]}});
            // The cluster pair's C stored from registers (rows off 16 bytes: no TMA store).
            if (tensor_cores)
                for (oprt_dtype_t dt : dtypes) check_matmul(dt, {{61, 3000}}, {{3000, 2056}}, {2061, 1});
        },
        [&] {
            for (oprt_dtype_t dt : all_dtypes()) {
                check_matmul(dt, {{33, 65}}, {{65, 47}});                     // odd K and N
                check_matmul(dt, {{130, 70}, {1, 130}}, {{70, 131}, {1, 70}});  // both transposed
                check_matmul(dt, {{129, 257}, {1, 129}}, {{257, 64}});         // a column-major
                check_matmul(dt, {{64, 36}, {}, 1}, {{36, 128}, {}, 1}, {}, 1);  // misaligned pointers
                check_matmul(dt, {{100, 40}, {0, 1}}, {{40, 36}});            // a broadcast down its rows
                check_matmul(dt, {{40, 52}}, {{52, 36}}, {72, 2});             // strided out
                check_matmul(dt, {{5, 0}}, {{0, 7}});                          // K = 0: zeros
            }
        });
}

}  // namespace
}  // namespace nvt
