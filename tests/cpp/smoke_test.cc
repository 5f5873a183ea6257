#include <gtest/gtest.h>

#include <vector>

#include "operator_runtime/operator_runtime.h"

TEST(Smoke, CopyContiguousF32) {
    std::vector<float> src(100), dst(100, -1.0f);
    for (int i = 0; i < 100; ++i) src[i] = float(i) * 0.5f;
    oprt_tensor_view_t v{};
    v.dtype = OPRT_DTYPE_F32;
    v.ndim = 1;
    v.shape[0] = 100;
    v.strides[0] = 1;
    oprt_copy_descriptor_t d = nullptr;
    ASSERT_EQ(oprt_create_copy_descriptor(&d, &v, &v), OPRT_SUCCESS) << oprt_last_error_message();
    ASSERT_EQ(oprt_execute_copy(d, nullptr, 0, dst.data(), src.data(), nullptr), OPRT_SUCCESS);
    ASSERT_EQ(oprt_destroy_copy_descriptor(d), OPRT_SUCCESS);
    EXPECT_EQ(dst, src);
}
