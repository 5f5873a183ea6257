// Descriptors are checked handles: destroying twice, using a destroyed
// descriptor, a descriptor of another operator or a value the library never
// returned is OPRT_ERR_INVALID_ARG with a message, never undefined behaviour.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "test_support.h"

namespace {
using namespace oprt_test;

class DescriptorHandles : public ::testing::TestWithParam<OpKind> {
protected:
    BackendGuard cpu_{OPRT_BACKEND_CPU};  // host buffers: the CPU backend in every build

    const OpSpec &op() const { return op_spec(GetParam()); }

    // A valid descriptor of `spec` on in (3, 4) f32 (out (3) for reduce_sum; for
    // matmul, (3, 4) @ (4, 1): test_support.h's matmul_views).
    static void *make(const OpSpec &spec) {
        const oprt_tensor_view_t in = make_view(OPRT_DTYPE_F32, {3, 4});
        const oprt_tensor_view_t out =
            make_view(OPRT_DTYPE_F32, spec.reduces ? std::vector<int64_t>{3} : std::vector<int64_t>{3, 4});
        void *desc = nullptr;
        if (spec.matmul) {
            const MatmulViews v = matmul_views(in);
            EXPECT_EQ(spec.create(&desc, &v.out, &v.a, &v.b, 0, 0.0f), OPRT_SUCCESS) << oprt_last_error_message();
            return desc;
        }
        EXPECT_EQ(spec.create(&desc, &out, &in, &in, 1, 0.0f), OPRT_SUCCESS) << oprt_last_error_message();
        return desc;
    }

    // Every call that takes a descriptor refuses `desc` with INVALID_ARG and a
    // message containing `word`.
    void ExpectRefused(void *desc, const std::string &word) {
        std::vector<float> in(12, 1.0f), out(12, 0.0f);
        size_t size = 0;
        const char *name = nullptr;
        const std::string context = std::string(op().name) + ": ";
        EXPECT_EQ(op().workspace(desc, &size), OPRT_ERR_INVALID_ARG) << context << "workspace";
        EXPECT_NE(std::string(oprt_last_error_message()).find(word), std::string::npos)
            << oprt_last_error_message();
        EXPECT_EQ(op().kernel_name(desc, &name), OPRT_ERR_INVALID_ARG) << context << "kernel_name";
        EXPECT_EQ(op().execute(desc, nullptr, 0, out.data(), in.data(), in.data()), OPRT_ERR_INVALID_ARG)
            << context << "execute";
        EXPECT_NE(std::string(oprt_last_error_message()).find(word), std::string::npos)
            << oprt_last_error_message();
        EXPECT_EQ(out[0], 0.0f) << "a refused execute wrote the output";
        EXPECT_EQ(op().destroy(desc), OPRT_ERR_INVALID_ARG) << context << "destroy";
        EXPECT_NE(std::string(oprt_last_error_message()).find(word), std::string::npos)
            << oprt_last_error_message();
    }
};

TEST_P(DescriptorHandles, DestroyedDescriptorIsRefused) {
    void *desc = make(op());
    ASSERT_NE(desc, nullptr);
    ASSERT_EQ(op().destroy(desc), OPRT_SUCCESS);
    ExpectRefused(desc, "not a live descriptor");  // also destroys it a second time
}

TEST_P(DescriptorHandles, StaleHandleStaysDeadAfterItsSlotIsReused) {
    void *old_desc = make(op());
    ASSERT_EQ(op().destroy(old_desc), OPRT_SUCCESS);
    std::vector<void *> fresh;  // new descriptors take the freed slot
    for (int i = 0; i < 4; ++i) fresh.push_back(make(op()));
    for (void *d : fresh) EXPECT_NE(d, old_desc);
    ExpectRefused(old_desc, "not a live descriptor");
    for (void *d : fresh) {  // still live, and run
        std::vector<float> in(12, 1.0f), out(12, 0.0f);
        EXPECT_EQ(op().execute(d, nullptr, 0, out.data(), in.data(), in.data()), OPRT_SUCCESS)
            << oprt_last_error_message();
        EXPECT_EQ(op().destroy(d), OPRT_SUCCESS);
    }
}

TEST_P(DescriptorHandles, DescriptorOfAnotherOperatorIsRefused) {
    for (const OpSpec &other : all_ops()) {
        if (other.kind == op().kind) continue;
        void *desc = make(other);
        ASSERT_NE(desc, nullptr);
        ExpectRefused(desc, other.create_fn);
        EXPECT_EQ(other.destroy(desc), OPRT_SUCCESS) << "a refused call must leave the descriptor live";
    }
}

TEST_P(DescriptorHandles, ValuesNeverReturnedAreRefused) {
    int on_stack = 0;
    std::vector<float> heap(64);
    for (void *bogus : {static_cast<void *>(&on_stack), static_cast<void *>(heap.data()),
                        reinterpret_cast<void *>(uintptr_t(1)), reinterpret_cast<void *>(~uintptr_t(0)),
                        reinterpret_cast<void *>(uintptr_t(0x100000000ull))})
        ExpectRefused(bogus, "not a live descriptor");
    ExpectRefused(nullptr, "NULL");
}

INSTANTIATE_TEST_SUITE_P(AllOps, DescriptorHandles, ::testing::ValuesIn(all_kinds()));

}  // namespace
