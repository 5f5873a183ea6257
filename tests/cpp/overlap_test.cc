// The overlap check of execute is exact: views that share no element run
// (interleaved columns, halves, even and odd elements), views that share one
// are refused, exact in-place stays allowed where it was. Cross-checked against
// the set of element addresses on random small layouts.
#include <gtest/gtest.h>

#include <algorithm>
#include <random>
#include <set>
#include <vector>

#include "test_support.h"

namespace {
using namespace oprt_test;

oprt_tensor_view_t view2(int64_t rows, int64_t cols, int64_t rs, int64_t cs) {
    return make_view(OPRT_DTYPE_F32, {rows, cols}, {rs, cs});
}

// A = arange(32).reshape(4, 8).
std::vector<float> arange32() {
    std::vector<float> a(32);
    for (int i = 0; i < 32; ++i) a[size_t(i)] = float(i);
    return a;
}

TEST(Overlap, InterleavedColumnsCopy) {  // copy_(A[:, 0], A[:, 1])
    BackendGuard cpu(OPRT_BACKEND_CPU);  // host buffers: the CPU backend in every build
    std::vector<float> a = arange32();
    const oprt_tensor_view_t col = make_view(OPRT_DTYPE_F32, {4}, {8});
    std::string error;
    ASSERT_EQ(run_op(op_spec(OpKind::kCopy), col, &col, nullptr, a.data(), a.data() + 1, nullptr, 0, 0.0f,
                     &error),
              OPRT_SUCCESS)
        << error;
    for (int r = 0; r < 4; ++r) EXPECT_EQ(a[size_t(8 * r)], float(8 * r + 1));
}

TEST(Overlap, HalvesReluAndSoftmax) {  // relu_(A[:, :4], A[:, 4:]), softmax_(A[:, :4], A[:, 4:])
    BackendGuard cpu(OPRT_BACKEND_CPU);  // host buffers: the CPU backend in every build
    std::vector<float> a = arange32();
    for (float &v : a) v -= 16.0f;
    const oprt_tensor_view_t half = view2(4, 4, 8, 1);
    std::string error;
    ASSERT_EQ(run_op(op_spec(OpKind::kRelu), half, &half, nullptr, a.data(), a.data() + 4, nullptr, 0, 0.5f,
                     &error),
              OPRT_SUCCESS)
        << error;
    for (int r = 0; r < 4; ++r)
        for (int c = 0; c < 4; ++c) {
            const float x = float(8 * r + 4 + c) - 16.0f;
            EXPECT_EQ(a[size_t(8 * r + c)], x > 0 ? x : 0.5f * x);
            EXPECT_EQ(a[size_t(8 * r + 4 + c)], x) << "the input changed";
        }
    a = arange32();
    ASSERT_EQ(run_op(op_spec(OpKind::kSoftmax), half, &half, nullptr, a.data(), a.data() + 4, nullptr, 1, 0.0f,
                     &error),
              OPRT_SUCCESS)
        << error;
    for (int r = 0; r < 4; ++r) {
        float sum = 0;
        for (int c = 0; c < 4; ++c) sum += a[size_t(8 * r + c)];
        EXPECT_NEAR(sum, 1.0f, 1e-6f);
        EXPECT_EQ(a[size_t(8 * r + 7)], float(8 * r + 7));
    }
}

TEST(Overlap, EvenAndOddElements) {  // copy_(buf[::2], buf[1::2])
    BackendGuard cpu(OPRT_BACKEND_CPU);  // host buffers: the CPU backend in every build
    std::vector<float> buf(16);
    for (int i = 0; i < 16; ++i) buf[size_t(i)] = float(i);
    const oprt_tensor_view_t even = make_view(OPRT_DTYPE_F32, {8}, {2});
    std::string error;
    ASSERT_EQ(run_op(op_spec(OpKind::kCopy), even, &even, nullptr, buf.data(), buf.data() + 1, nullptr, 0, 0.0f,
                     &error),
              OPRT_SUCCESS)
        << error;
    for (int i = 0; i < 16; ++i) EXPECT_EQ(buf[size_t(i)], float(i | 1));
}

TEST(Overlap, TrueOverlapsStillRefused) {
    BackendGuard cpu(OPRT_BACKEND_CPU);  // host buffers: the CPU backend in every build
    std::vector<float> a = arange32();
    const oprt_tensor_view_t half = view2(4, 4, 8, 1);
    std::string error;
    // A[:, 1:5] from A[:, :4]: shares columns 1..3.
    EXPECT_EQ(run_op(op_spec(OpKind::kCopy), half, &half, nullptr, a.data() + 1, a.data(), nullptr, 0, 0.0f,
                     &error),
              OPRT_ERR_INVALID_ARG);
    EXPECT_NE(error.find("overlaps"), std::string::npos) << error;
    // Softmax in place is refused; relu in place (same layout) is allowed.
    EXPECT_EQ(run_op(op_spec(OpKind::kSoftmax), half, &half, nullptr, a.data(), a.data(), nullptr, 1, 0.0f,
                     &error),
              OPRT_ERR_INVALID_ARG);
    EXPECT_EQ(run_op(op_spec(OpKind::kRelu), half, &half, nullptr, a.data(), a.data(), nullptr, 0, 0.0f, &error),
              OPRT_SUCCESS)
        << error;
    // Same memory, another layout (a transpose of a 4x4 block): refused.
    const oprt_tensor_view_t transposed = view2(4, 4, 1, 8);
    EXPECT_EQ(run_op(op_spec(OpKind::kCopy), half, &transposed, nullptr, a.data(), a.data(), nullptr, 0, 0.0f,
                     &error),
              OPRT_ERR_INVALID_ARG);
}

std::set<int64_t> addresses(const std::vector<int64_t> &shape, const std::vector<int64_t> &strides,
                            int64_t base) {
    std::set<int64_t> out;
    std::vector<int64_t> idx(shape.size(), 0);
    for (;;) {
        int64_t off = base;
        for (size_t d = 0; d < shape.size(); ++d) off += idx[d] * strides[d];
        out.insert(off);
        size_t d = shape.size();
        while (d > 0 && ++idx[d - 1] == shape[d - 1]) idx[--d] = 0;
        if (d == 0) return out;
    }
}

// Random out layouts (permuted, padded dense) and input layouts (any strides,
// any offset) in one buffer: oprt_check_copy_execute accepts exactly the pairs
// that share no element (or are the exact in-place case), and copy computes them.
TEST(Overlap, RandomLayoutsMatchBruteForce) {
    BackendGuard cpu(OPRT_BACKEND_CPU);  // host buffers: the CPU backend in every build
    std::mt19937 rng(12345);
    auto pick = [&](int lo, int hi) { return int64_t(std::uniform_int_distribution<int>(lo, hi)(rng)); };
    int accepted = 0, refused = 0;
    for (int trial = 0; trial < 3000; ++trial) {
        const int ndim = int(pick(1, 3));
        const size_t nd = static_cast<size_t>(ndim);
        std::vector<int64_t> shape(nd), out_strides(nd), in_strides(nd);
        for (int64_t &s : shape) s = pick(1, 4);
        std::vector<int> order(nd);
        for (int d = 0; d < ndim; ++d) order[size_t(d)] = d;
        std::shuffle(order.begin(), order.end(), rng);
        int64_t step = pick(1, 3);
        for (int d : order) {
            out_strides[size_t(d)] = step;
            step *= shape[size_t(d)] + pick(0, 2);
        }
        for (int64_t &s : in_strides) s = pick(0, 9);
        const bool same = pick(0, 5) == 0;
        if (same) in_strides = out_strides;
        const int64_t out_base = pick(0, 20), in_base = same && pick(0, 1) ? out_base : pick(0, 40);
        const std::set<int64_t> o = addresses(shape, out_strides, out_base), i = addresses(shape, in_strides, in_base);
        bool share = false;
        for (int64_t x : o) share = share || i.count(x) != 0;
        bool exact_in_place = out_base == in_base;
        for (int d = 0; d < ndim; ++d)
            exact_in_place = exact_in_place && (shape[size_t(d)] == 1 || out_strides[size_t(d)] == in_strides[size_t(d)]);
        const bool want_ok = !share || exact_in_place;

        std::vector<float> buf(256);
        for (size_t k = 0; k < buf.size(); ++k) buf[k] = float(k);
        const oprt_tensor_view_t ov = make_view(OPRT_DTYPE_F32, shape, out_strides);
        const oprt_tensor_view_t iv = make_view(OPRT_DTYPE_F32, shape, in_strides);
        oprt_copy_descriptor_t desc = nullptr;
        ASSERT_EQ(oprt_create_copy_descriptor(&desc, &ov, &iv), OPRT_SUCCESS) << oprt_last_error_message();
        const oprt_status_t s = oprt_check_copy_execute(desc, buf.data() + out_base, buf.data() + in_base);
        EXPECT_EQ(s == OPRT_SUCCESS, want_ok)
            << "trial " << trial << " share=" << share << " exact=" << exact_in_place << ": "
            << oprt_last_error_message();
        if (s == OPRT_SUCCESS) {
            ++accepted;
            const std::vector<float> before = buf;
            ASSERT_EQ(oprt_execute_copy(desc, nullptr, 0, buf.data() + out_base, buf.data() + in_base, nullptr),
                      OPRT_SUCCESS);
            std::vector<int64_t> idx(nd, 0);
            for (;;) {  // every out element holds the input's element from before the call
                int64_t oo = out_base, io = in_base;
                for (int d = 0; d < ndim; ++d) {
                    oo += idx[size_t(d)] * out_strides[size_t(d)];
                    io += idx[size_t(d)] * in_strides[size_t(d)];
                }
                ASSERT_EQ(buf[size_t(oo)], before[size_t(io)]) << "trial " << trial;
                int d = ndim;
                while (d > 0 && ++idx[size_t(d - 1)] == shape[size_t(d - 1)]) idx[size_t(--d)] = 0;
                if (d == 0) break;
            }
        } else {
            ++refused;
        }
        EXPECT_EQ(oprt_destroy_copy_descriptor(desc), OPRT_SUCCESS);
    }
    EXPECT_GT(accepted, 300);
    EXPECT_GT(refused, 300);
}

}  // namespace

namespace {

// A layout pair built to have no shared element while every search step looks
// promising: out's elements sit at multiples of P, in's strides are P * a + 1,
// and in starts 500 past out (in's elements are 500 + (sum of its indices) modulo
// P, never 0). The search gives up past its work limit: refused, saying so.
TEST(Overlap, UndecidableWithinTheWorkLimitIsRefusedWithItsOwnMessage) {
    BackendGuard cpu(OPRT_BACKEND_CPU);  // host buffers: the CPU backend in every build
    constexpr int64_t P = 1000, k = 4;
    std::vector<int64_t> shape(8, k), out_strides(8), in_strides(8);
    int64_t step = P;
    for (int d = 7; d >= 0; --d) {
        out_strides[size_t(d)] = step;
        step *= k;
        in_strides[size_t(d)] = P * (d + 2) + 1;
    }
    const oprt_tensor_view_t ov = make_view(OPRT_DTYPE_F32, shape, out_strides);
    const oprt_tensor_view_t iv = make_view(OPRT_DTYPE_F32, shape, in_strides);
    oprt_copy_descriptor_t desc = nullptr;
    ASSERT_EQ(oprt_create_copy_descriptor(&desc, &ov, &iv), OPRT_SUCCESS) << oprt_last_error_message();
    // Addresses only: the check reads no data.
    static float anchor[4];
    const uintptr_t out = reinterpret_cast<uintptr_t>(anchor);
    const oprt_status_t s = oprt_check_copy_execute(desc, reinterpret_cast<void *>(out),
                                                    reinterpret_cast<const void *>(out + 500 * sizeof(float)));
    EXPECT_EQ(s, OPRT_ERR_INVALID_ARG);
    EXPECT_NE(std::string(oprt_last_error_message()).find("could not decide"), std::string::npos)
        << oprt_last_error_message();
    EXPECT_EQ(oprt_destroy_copy_descriptor(desc), OPRT_SUCCESS);
}

}  // namespace
