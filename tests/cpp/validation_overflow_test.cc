// Regressions found by the fuzz targets (tests/fuzz): int64 arithmetic in the
// shared validation (runtime/tensor.cc) on views at the limits. Each call here
// used to overflow a signed integer (undefined behaviour, reported by UBSan in
// the sanitizer build of scripts/ci/sanitizers.sh); the statuses are checked
// in every build.
#include <gtest/gtest.h>

#include <cstdint>
#include <limits>
#include <string>
#include <vector>

#include "test_support.h"

namespace {

using oprt_test::BackendGuard;
using oprt_test::make_view;

constexpr int64_t kMax = std::numeric_limits<int64_t>::max();
constexpr int64_t kHuge = int64_t(1) << 62;

// A view whose last element is exactly INT64_MAX elements past its first: the
// span (extent + 1) does not fit in int64.
TEST(ValidationOverflow, ExtentOfInt64MaxIsRejected) {
    BackendGuard guard(OPRT_BACKEND_CPU);
    for (oprt_dtype_t dt : {OPRT_DTYPE_F32, OPRT_DTYPE_F16}) {
        const oprt_tensor_view_t bad = make_view(dt, {2}, {kMax});
        const oprt_tensor_view_t ok = make_view(dt, {2});
        oprt_copy_descriptor_t d = nullptr;
        EXPECT_EQ(oprt_create_copy_descriptor(&d, &ok, &bad), OPRT_ERR_INVALID_ARG);
        EXPECT_NE(std::string(oprt_last_error_message()).find("spans more"), std::string::npos)
            << oprt_last_error_message();
        EXPECT_EQ(d, nullptr);
        oprt_softmax_descriptor_t s = nullptr;
        EXPECT_EQ(oprt_create_softmax_descriptor(&s, &ok, &bad, 0), OPRT_ERR_INVALID_ARG);
    }
}

// Empty tensors may have huge dims: nothing is addressed, so they are valid.
// Merging such dims (size * size, stride * size) and counting the rows of an
// axis op (outer) overflowed int64.
TEST(ValidationOverflow, EmptyTensorsWithHugeDims) {
    BackendGuard guard(OPRT_BACKEND_CPU);
    const oprt_tensor_view_t empty3 = make_view(OPRT_DTYPE_F32, {0, kHuge, 4}, {0, 4, 1});

    oprt_copy_descriptor_t c = nullptr;
    ASSERT_EQ(oprt_create_copy_descriptor(&c, &empty3, &empty3), OPRT_SUCCESS) << oprt_last_error_message();
    EXPECT_EQ(oprt_execute_copy(c, nullptr, 0, nullptr, nullptr, nullptr), OPRT_SUCCESS);
    EXPECT_EQ(oprt_destroy_copy_descriptor(c), OPRT_SUCCESS);

    oprt_vector_add_descriptor_t v = nullptr;
    ASSERT_EQ(oprt_create_vector_add_descriptor(&v, &empty3, &empty3, &empty3), OPRT_SUCCESS)
        << oprt_last_error_message();
    EXPECT_EQ(oprt_execute_vector_add(v, nullptr, 0, nullptr, nullptr, nullptr, nullptr), OPRT_SUCCESS);
    EXPECT_EQ(oprt_destroy_vector_add_descriptor(v), OPRT_SUCCESS);

    // softmax over the empty axis: the other dims (2^62 x 4) would be 2^64 rows.
    const oprt_tensor_view_t rows = make_view(OPRT_DTYPE_F32, {0, kHuge, 4}, {0, 4, 1});
    oprt_softmax_descriptor_t s = nullptr;
    ASSERT_EQ(oprt_create_softmax_descriptor(&s, &rows, &rows, 0), OPRT_SUCCESS) << oprt_last_error_message();
    size_t ws = 1;
    EXPECT_EQ(oprt_get_softmax_workspace_size(s, &ws), OPRT_SUCCESS);
    EXPECT_EQ(ws, 0u);
    EXPECT_EQ(oprt_execute_softmax(s, nullptr, 0, nullptr, nullptr, nullptr), OPRT_SUCCESS);
    EXPECT_EQ(oprt_destroy_softmax_descriptor(s), OPRT_SUCCESS);

    // reduce_sum to an empty output whose other dims multiply past int64.
    const oprt_tensor_view_t in = make_view(OPRT_DTYPE_BF16, {0, kHuge, 4, 5}, {0, 4, 1, 1});
    const oprt_tensor_view_t out = make_view(OPRT_DTYPE_BF16, {0, kHuge, 4}, {0, 4, 1});
    oprt_reduce_sum_descriptor_t r = nullptr;
    ASSERT_EQ(oprt_create_reduce_sum_descriptor(&r, &out, &in, 3), OPRT_SUCCESS) << oprt_last_error_message();
    EXPECT_EQ(oprt_execute_reduce_sum(r, nullptr, 0, nullptr, nullptr, nullptr), OPRT_SUCCESS);
    EXPECT_EQ(oprt_destroy_reduce_sum_descriptor(r), OPRT_SUCCESS);
}

// reduce_sum over an empty axis writes zeros and never reads the input, whose
// strides may then be anything: offsets into it overflowed int64.
TEST(ValidationOverflow, EmptyAxisWithHugeInputStrides) {
    BackendGuard guard(OPRT_BACKEND_CPU);
    for (int64_t axis : {0, 1}) {
        const oprt_tensor_view_t in = axis == 0 ? make_view(OPRT_DTYPE_F32, {0, 3, 5}, {kMax, kMax, kMax})
                                                : make_view(OPRT_DTYPE_F32, {3, 0, 5}, {kMax, kMax, kMax});
        const oprt_tensor_view_t out = make_view(OPRT_DTYPE_F32, {3, 5});
        oprt_reduce_sum_descriptor_t r = nullptr;
        ASSERT_EQ(oprt_create_reduce_sum_descriptor(&r, &out, &in, axis), OPRT_SUCCESS) << oprt_last_error_message();
        std::vector<float> y(15, 7.0f);
        EXPECT_EQ(oprt_execute_reduce_sum(r, nullptr, 0, y.data(), nullptr, nullptr), OPRT_SUCCESS)
            << oprt_last_error_message();
        EXPECT_EQ(y, std::vector<float>(15, 0.0f));
        EXPECT_EQ(oprt_destroy_reduce_sum_descriptor(r), OPRT_SUCCESS);
    }
}

// Empty outputs whose axis is long, with the row-major strides a C caller
// passes: on the backend AUTO picks (the GPU in the NVIDIA variant with a
// device), whose planning divided by the row count (0) for long rows.
TEST(ValidationOverflow, EmptyOutputsWithLongRows) {
    BackendGuard guard(OPRT_BACKEND_AUTO);
    const int64_t n = int64_t(1) << 20;
    for (oprt_dtype_t dt : {OPRT_DTYPE_F32, OPRT_DTYPE_BF16}) {
        const oprt_tensor_view_t rows = make_view(dt, {0, n}, {n, 1});
        const oprt_tensor_view_t cols = make_view(dt, {n, 0}, {1, 1});
        const oprt_tensor_view_t none = make_view(dt, {0});
        for (int64_t axis : {0, 1}) {
            oprt_softmax_descriptor_t s = nullptr;
            ASSERT_EQ(oprt_create_softmax_descriptor(&s, &rows, &rows, axis), OPRT_SUCCESS) << oprt_last_error_message();
            EXPECT_EQ(oprt_execute_softmax(s, nullptr, 0, nullptr, nullptr, nullptr), OPRT_SUCCESS);
            EXPECT_EQ(oprt_destroy_softmax_descriptor(s), OPRT_SUCCESS);
            ASSERT_EQ(oprt_create_softmax_descriptor(&s, &cols, &cols, axis), OPRT_SUCCESS) << oprt_last_error_message();
            EXPECT_EQ(oprt_destroy_softmax_descriptor(s), OPRT_SUCCESS);
        }
        oprt_reduce_sum_descriptor_t r = nullptr;
        ASSERT_EQ(oprt_create_reduce_sum_descriptor(&r, &none, &rows, 1), OPRT_SUCCESS) << oprt_last_error_message();
        EXPECT_EQ(oprt_execute_reduce_sum(r, nullptr, 0, nullptr, nullptr, nullptr), OPRT_SUCCESS);
        EXPECT_EQ(oprt_destroy_reduce_sum_descriptor(r), OPRT_SUCCESS);
        ASSERT_EQ(oprt_create_reduce_sum_descriptor(&r, &none, &cols, 0), OPRT_SUCCESS) << oprt_last_error_message();
        EXPECT_EQ(oprt_destroy_reduce_sum_descriptor(r), OPRT_SUCCESS);
    }
}

}  // namespace
