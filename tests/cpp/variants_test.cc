// oprt_list_<op>_variants / oprt_set_<op>_variant on the CPU backend: the count
// query, capacity, NULL and unknown arguments, "auto", and a backend that is
// not built in. The GPU ladders run against references in nvidia/variants_test.cc.
#include <string>
#include <vector>

#include "test_support.h"

namespace {

using ListFn = oprt_status_t (*)(oprt_backend_t, const char **, int, int *);

struct Listed {
    const char *op;
    ListFn list;
};

const Listed kLists[] = {
    {"copy", &oprt_list_copy_variants},
    {"vector_add", &oprt_list_vector_add_variants},
    {"relu", &oprt_list_relu_variants},
    {"reduce_sum", &oprt_list_reduce_sum_variants},
    {"softmax", &oprt_list_softmax_variants},
};

std::string last_error() { return oprt_last_error_message(); }

TEST(Variants, CpuCountQueryThenNames) {
    for (const Listed &l : kLists) {
        SCOPED_TRACE(l.op);
        int count = -1;
        ASSERT_EQ(l.list(OPRT_BACKEND_CPU, nullptr, 0, &count), OPRT_SUCCESS) << last_error();
        ASSERT_GE(count, 1);
        std::vector<const char *> names(size_t(count) + 1, nullptr);
        int again = -1;
        ASSERT_EQ(l.list(OPRT_BACKEND_CPU, names.data(), count + 1, &again), OPRT_SUCCESS);
        EXPECT_EQ(again, count);
        EXPECT_EQ(names[size_t(count)], nullptr) << "wrote past count";
        // The plan's choice is listed last: alone for the operators without a CPU
        // ladder, the ladder's top step for softmax and reduce_sum (ops/*/cpu/ladder.cc).
        EXPECT_STREQ(names[size_t(count - 1)], "auto");
        // A smaller capacity writes that many and still reports the full count.
        const char *first = nullptr;
        ASSERT_EQ(l.list(OPRT_BACKEND_CPU, &first, 1, &again), OPRT_SUCCESS);
        EXPECT_EQ(again, count);
        EXPECT_STREQ(first, names[0]);
    }
}

TEST(Variants, ListRejectsBadArguments) {
    const char *names[4];
    int count = 0;
    EXPECT_EQ(oprt_list_softmax_variants(OPRT_BACKEND_CPU, names, 4, nullptr), OPRT_ERR_INVALID_ARG);
    EXPECT_NE(last_error().find("count"), std::string::npos) << last_error();
    EXPECT_EQ(oprt_list_softmax_variants(OPRT_BACKEND_CPU, names, -1, &count), OPRT_ERR_INVALID_ARG);
    EXPECT_NE(last_error().find("capacity"), std::string::npos) << last_error();
    EXPECT_EQ(oprt_list_softmax_variants(OPRT_BACKEND_CPU, nullptr, 2, &count), OPRT_ERR_INVALID_ARG);
    EXPECT_NE(last_error().find("names is NULL"), std::string::npos) << last_error();
    EXPECT_EQ(oprt_list_softmax_variants(OPRT_BACKEND_AUTO, names, 4, &count), OPRT_ERR_INVALID_ARG);
    EXPECT_NE(last_error().find("oprt_list_softmax_variants"), std::string::npos) << last_error();
}

TEST(Variants, ListOfABackendNotBuiltIn) {
    // NVIDIA and MetaX are never built together: one of them is missing in every build.
#if OPRT_TEST_WITH_METAX
    const oprt_backend_t missing = OPRT_BACKEND_NVIDIA;
#else
    const oprt_backend_t missing = OPRT_BACKEND_METAX;
#endif
    int count = 7;
    EXPECT_EQ(oprt_list_copy_variants(missing, nullptr, 0, &count), OPRT_ERR_BACKEND_UNAVAILABLE);
    EXPECT_EQ(count, 0);
    EXPECT_NE(last_error().find("not built"), std::string::npos) << last_error();
#if !OPRT_TEST_WITH_NVIDIA && !OPRT_TEST_WITH_METAX
    EXPECT_EQ(oprt_list_copy_variants(OPRT_BACKEND_NVIDIA, nullptr, 0, &count), OPRT_ERR_BACKEND_UNAVAILABLE);
#endif
}

class SoftmaxOnCpu : public ::testing::Test {
protected:
    void SetUp() override {
        in_.resize(3 * 5);
        for (size_t i = 0; i < in_.size(); ++i) in_[i] = float(i % 7) - 3.0f;
        out_.assign(in_.size(), -1.0f);
        const oprt_tensor_view_t o = oprt_test::make_view(OPRT_DTYPE_F32, {3, 5}, {}, out_.data());
        const oprt_tensor_view_t i = oprt_test::make_view(OPRT_DTYPE_F32, {3, 5}, {}, in_.data());
        ASSERT_EQ(oprt_create_softmax_descriptor(&desc_, &o, &i, 1), OPRT_SUCCESS) << last_error();
        ASSERT_EQ(oprt_get_softmax_kernel_name(desc_, &planned_), OPRT_SUCCESS);
    }
    void TearDown() override {
        if (desc_) EXPECT_EQ(oprt_destroy_softmax_descriptor(desc_), OPRT_SUCCESS);
    }
    oprt_test::BackendGuard guard_{OPRT_BACKEND_CPU};
    std::vector<float> in_, out_;
    oprt_softmax_descriptor_t desc_ = nullptr;
    const char *planned_ = nullptr;
};

TEST_F(SoftmaxOnCpu, SetRejectsNullAndUnknownNames) {
    EXPECT_EQ(oprt_set_softmax_variant(nullptr, "auto"), OPRT_ERR_INVALID_ARG);
    EXPECT_NE(last_error().find("desc is NULL"), std::string::npos) << last_error();
    EXPECT_EQ(oprt_set_softmax_variant(desc_, nullptr), OPRT_ERR_INVALID_ARG);
    EXPECT_NE(last_error().find("name is NULL"), std::string::npos) << last_error();
    // An unknown name (here a step of the NVIDIA ladder, which the CPU lacks) lists the valid ones.
    EXPECT_EQ(oprt_set_softmax_variant(desc_, "on_chip"), OPRT_ERR_INVALID_ARG);
    EXPECT_NE(last_error().find("'on_chip' is not a softmax variant of the cpu backend"), std::string::npos)
        << last_error();
    EXPECT_NE(last_error().find("valid: auto"), std::string::npos) << last_error();
    // A failed set leaves the plan as it was.
    const char *name = nullptr;
    ASSERT_EQ(oprt_get_softmax_kernel_name(desc_, &name), OPRT_SUCCESS);
    EXPECT_STREQ(name, planned_);
}

TEST_F(SoftmaxOnCpu, AutoKeepsThePlanAndRuns) {
    ASSERT_EQ(oprt_set_softmax_variant(desc_, "auto"), OPRT_SUCCESS) << last_error();
    const char *name = nullptr;
    ASSERT_EQ(oprt_get_softmax_kernel_name(desc_, &name), OPRT_SUCCESS);
    EXPECT_STREQ(name, planned_);
    size_t ws = 0;
    ASSERT_EQ(oprt_get_softmax_workspace_size(desc_, &ws), OPRT_SUCCESS);
    std::vector<unsigned char> workspace(ws + 1);
    ASSERT_EQ(oprt_execute_softmax(desc_, workspace.data(), ws, out_.data(), in_.data(), nullptr), OPRT_SUCCESS)
        << last_error();
    for (int r = 0; r < 3; ++r) {
        double sum = 0;
        for (int c = 0; c < 5; ++c) sum += out_[size_t(r * 5 + c)];
        EXPECT_NEAR(sum, 1.0, 1e-6) << "row " << r;
    }
}

}  // namespace
