// oprt_get_<op>_kernel_name: every operator names the kernel its plan picked.
// On the CPU backend the name is "cpu.<path>" and follows the shape (dense or
// strided, buffered or streaming softmax rows, reduce over rows or inner runs);
// bad arguments fail with OPRT_ERR_INVALID_ARG and a message naming the call.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "test_support.h"

namespace {

using oprt_test::all_ops;
using oprt_test::BackendGuard;
using oprt_test::make_view;
using oprt_test::OpKind;
using oprt_test::OpSpec;
using Shape = std::vector<int64_t>;

// The typed kernel-name query of each operator (test_support.h's table).
oprt_status_t query_kernel_name(OpKind kind, void *desc, const char **name) {
    return oprt_test::op_spec(kind).kernel_name(desc, name);
}

const char *name_of(OpKind kind) {
    for (const OpSpec &op : all_ops())
        if (op.kind == kind) return op.name;
    return "?";
}

// Creates a CPU descriptor of `kind` for `in` (out: in's shape, or in's shape
// with `axis` removed for reductions), returns its kernel name and destroys it.
std::string cpu_kernel_name(OpKind kind, const oprt_tensor_view_t &in, int64_t axis = -1) {
    BackendGuard guard(OPRT_BACKEND_CPU);
    const OpSpec &op = oprt_test::op_spec(kind);
    Shape out_shape(in.shape, in.shape + in.ndim);
    if (op.reduces) out_shape.erase(out_shape.begin() + (axis + in.ndim) % in.ndim);
    const oprt_tensor_view_t out = make_view(in.dtype, out_shape);
    const oprt_test::MatmulViews mm = oprt_test::matmul_views(in);  // matmul: in @ (C, 1)
    void *desc = nullptr;
    const oprt_status_t s = op.matmul ? op.create(&desc, &mm.out, &mm.a, &mm.b, 0, 0.0f)
                                      : op.create(&desc, &out, &in, &in, axis, 0.0f);
    EXPECT_EQ(s, OPRT_SUCCESS) << op.create_fn << ": " << oprt_last_error_message();
    if (s != OPRT_SUCCESS) return "<create failed>";
    const char *name = nullptr;
    EXPECT_EQ(query_kernel_name(kind, desc, &name), OPRT_SUCCESS) << oprt_last_error_message();
    std::string result = name ? name : "<NULL>";
    EXPECT_EQ(op.destroy(desc), OPRT_SUCCESS);
    return result;
}

class KernelNameTest : public ::testing::TestWithParam<OpKind> {};

TEST_P(KernelNameTest, CpuNamesAreNonEmpty) {
    const OpKind kind = GetParam();
    for (oprt_dtype_t dtype : {OPRT_DTYPE_F32, OPRT_DTYPE_F16, OPRT_DTYPE_BF16}) {
        for (const Shape &shape : {Shape{4096}, Shape{33, 65}, Shape{2, 3, 4}}) {
            const std::string name = cpu_kernel_name(kind, make_view(dtype, shape));
            EXPECT_EQ(name.rfind("cpu.", 0), 0u) << name_of(kind) << ": " << name;
            EXPECT_GT(name.size(), 4u) << name_of(kind);
        }
        // A transposed view: the strided paths are named too.
        const std::string name = cpu_kernel_name(kind, make_view(dtype, {33, 65}, {1, 33}));
        EXPECT_EQ(name.rfind("cpu.", 0), 0u) << name_of(kind) << ": " << name;
    }
}

TEST_P(KernelNameTest, BadArgumentsFail) {
    const OpKind kind = GetParam();
    const char *name = "unchanged";
    EXPECT_EQ(query_kernel_name(kind, nullptr, &name), OPRT_ERR_INVALID_ARG);
    const std::string fn = std::string("oprt_get_") + name_of(kind) + "_kernel_name";
    EXPECT_NE(std::string(oprt_last_error_message()).find(fn), std::string::npos)
        << oprt_last_error_message();

    BackendGuard guard(OPRT_BACKEND_CPU);
    const OpSpec &op = oprt_test::op_spec(kind);
    const oprt_tensor_view_t v = make_view(OPRT_DTYPE_F32, {8});
    const oprt_tensor_view_t out = make_view(OPRT_DTYPE_F32, op.reduces ? Shape{} : Shape{8});
    const oprt_test::MatmulViews mm = oprt_test::matmul_views(v);
    void *desc = nullptr;
    ASSERT_EQ(op.matmul ? op.create(&desc, &mm.out, &mm.a, &mm.b, 0, 0.0f) : op.create(&desc, &out, &v, &v, 0, 0.0f),
              OPRT_SUCCESS)
        << oprt_last_error_message();
    EXPECT_EQ(query_kernel_name(kind, desc, nullptr), OPRT_ERR_INVALID_ARG);
    const std::string msg = oprt_last_error_message();
    EXPECT_NE(msg.find("name"), std::string::npos) << msg;
    EXPECT_EQ(op.destroy(desc), OPRT_SUCCESS);
}

INSTANTIATE_TEST_SUITE_P(AllOps, KernelNameTest,
                         ::testing::ValuesIn(oprt_test::all_kinds()),
                         [](const ::testing::TestParamInfo<OpKind> &info) {
                             return std::string(name_of(info.param));
                         });

// The CPU names follow the path each shape takes.
TEST(KernelNameCpu, NamesFollowTheShape) {
    const auto f32 = [](const Shape &shape, const Shape &strides = {}) {
        return make_view(OPRT_DTYPE_F32, shape, strides);
    };
    EXPECT_EQ(cpu_kernel_name(OpKind::kCopy, f32({1024})), "cpu.memcpy");
    EXPECT_EQ(cpu_kernel_name(OpKind::kCopy, f32({33, 65}, {1, 33})), "cpu.strided");
    EXPECT_EQ(cpu_kernel_name(OpKind::kRelu, f32({1024})), "cpu.contiguous");
    EXPECT_EQ(cpu_kernel_name(OpKind::kVectorAdd, f32({33, 65}, {1, 33})), "cpu.strided");
    EXPECT_EQ(cpu_kernel_name(OpKind::kSoftmax, f32({4, 1024})), "cpu.rows_buffered");
    EXPECT_EQ(cpu_kernel_name(OpKind::kSoftmax, f32({2, (1 << 18) + 1})), "cpu.rows_streaming");
    EXPECT_EQ(cpu_kernel_name(OpKind::kSoftmax, f32({33, 65}), 0), "cpu.strided_buffered");
    EXPECT_EQ(cpu_kernel_name(OpKind::kReduceSum, f32({64, 1024}), 1), "cpu.rows_dense");
    // Every other element of each row: a strided axis, no stride-1 inner run.
    EXPECT_EQ(cpu_kernel_name(OpKind::kReduceSum, f32({64, 1024}, {2048, 2}), 1),
              "cpu.rows_strided");
    // Below the parallel grain: never split, whatever the thread count.
    EXPECT_EQ(cpu_kernel_name(OpKind::kReduceSum, f32({16, 1024}), 0), "cpu.inner_blocks");
    EXPECT_EQ(cpu_kernel_name(OpKind::kReduceSum, f32({4, 0}), 1), "cpu.empty_axis_zeros");
}

}  // namespace
