// One fault, one code: a value that is no backend is OPRT_ERR_INVALID_ARG in
// every variants listing, as in oprt_set_backend; a slope that is not finite
// is refused by relu.
#include <gtest/gtest.h>

#include <limits>

#include "test_support.h"

namespace {
using namespace oprt_test;

TEST(Consistency, ListVariantsWithAValueThatIsNoBackend) {
    using ListFn = oprt_status_t (*)(oprt_backend_t, const char **, int, int *);
    const ListFn lists[] = {&oprt_list_copy_variants, &oprt_list_vector_add_variants,
                            &oprt_list_relu_variants, &oprt_list_silu_variants,
                            &oprt_list_reduce_sum_variants, &oprt_list_softmax_variants};
    for (int value : {99, -1, 4}) {
        const oprt_backend_t bad = raw_enum<oprt_backend_t>(value);
        EXPECT_EQ(oprt_set_backend(bad), OPRT_ERR_INVALID_ARG);
        for (ListFn list : lists) {
            int count = -1;
            EXPECT_EQ(list(bad, nullptr, 0, &count), OPRT_ERR_INVALID_ARG) << value;
            EXPECT_NE(std::string(oprt_last_error_message()).find("is not a backend"), std::string::npos)
                << oprt_last_error_message();
            EXPECT_EQ(count, 0);
        }
    }
}

TEST(Consistency, ReluSlopeMustBeFinite) {
    const oprt_tensor_view_t v = make_view(OPRT_DTYPE_F32, {3, 4});
    for (float slope : {std::numeric_limits<float>::infinity(), -std::numeric_limits<float>::infinity(),
                        std::numeric_limits<float>::quiet_NaN()}) {
        oprt_relu_descriptor_t desc = nullptr;
        EXPECT_EQ(oprt_create_relu_descriptor(&desc, &v, &v, slope), OPRT_ERR_INVALID_ARG);
        EXPECT_NE(std::string(oprt_last_error_message()).find("negative_slope"), std::string::npos);
        EXPECT_EQ(desc, nullptr);
    }
    oprt_relu_descriptor_t desc = nullptr;
    ASSERT_EQ(oprt_create_relu_descriptor(&desc, &v, &v, std::numeric_limits<float>::max()), OPRT_SUCCESS);
    EXPECT_EQ(oprt_destroy_relu_descriptor(desc), OPRT_SUCCESS);
}

}  // namespace
