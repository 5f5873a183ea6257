// Concurrency on the CPU backend. A descriptor is read-only after creation:
// many threads may execute one descriptor at once, each with its own output
// (and workspace), and get bit for bit what one thread gets. The current
// backend and the last error message are per thread. The kernels' parallel
// loops (shapes above the 2^15-element grain) share one thread pool: one caller
// at a time uses it, the others run in their own thread, so this runs both.
#include <gtest/gtest.h>

#include <cstring>
#include <mutex>
#include <random>
#include <string>
#include <thread>
#include <vector>

#include "runtime/internal/dtype.h"
#include "test_barrier.h"
#include "test_support.h"

namespace {

using oprt_test::contiguous_strides;
using oprt_test::dtype_bytes;
using oprt_test::make_view;
using oprt_test::op_spec;
using oprt_test::OpKind;
using oprt_test::OpSpec;
using Shape = std::vector<int64_t>;

constexpr int kThreads = 8;
constexpr int kIterations = 3;

using oprt_test::Barrier;

struct Operand {
    Shape shape = {}, strides = {};  // strides empty: row-major
};

struct Case {
    const char *name;
    OpKind kind;
    oprt_dtype_t dtype;
    Operand out = {}, in0 = {}, in1 = {};
    int64_t axis = 0;
    float slope = 0.0f;
    bool in_place = false;  // elementwise: out is in0's memory, same layout
};

int64_t extent_elems(const Operand &o) {
    const Shape strides = o.strides.empty() ? contiguous_strides(o.shape) : o.strides;
    int64_t extent = 1;
    for (size_t d = 0; d < o.shape.size(); ++d) {
        if (o.shape[d] == 0) return 0;
        extent += (o.shape[d] - 1) * strides[d];
    }
    return extent;
}

// Random finite values with a few NaN and inf, stored in `dtype`.
std::vector<unsigned char> random_buffer(oprt_dtype_t dtype, int64_t elems, uint32_t seed) {
    std::mt19937 rng(seed);
    std::uniform_real_distribution<float> uni(-4.0f, 4.0f);
    const int64_t es = dtype_bytes(dtype);
    std::vector<unsigned char> buf(size_t(elems * es));
    for (int64_t i = 0; i < elems; ++i) {
        float v = uni(rng);
        if (i % 997 == 5) v = __builtin_nanf("");
        if (i % 1009 == 7) v = i % 2 ? __builtin_inff() : -__builtin_inff();
        if (dtype == OPRT_DTYPE_F32) {
            std::memcpy(&buf[size_t(i * es)], &v, 4);
        } else {
            const uint16_t bits = dtype == OPRT_DTYPE_F16 ? oprt::f32_to_f16(v).bits : oprt::f32_to_bf16(v).bits;
            std::memcpy(&buf[size_t(i * es)], &bits, 2);
        }
    }
    return buf;
}

std::vector<Case> cases() {
    const oprt_dtype_t f32 = OPRT_DTYPE_F32, f16 = OPRT_DTYPE_F16, bf16 = OPRT_DTYPE_BF16;
    return {
        {"copy_f32_contiguous", OpKind::kCopy, f32, {{70001}}, {{70001}}, {}},
        {"copy_f16_transposed", OpKind::kCopy, f16, {{301, 257}}, {{301, 257}, {1, 301}}, {}},
        {"vector_add_bf16_bias", OpKind::kVectorAdd, bf16, {{300, 257}}, {{300, 257}}, {{257}}},
        {"vector_add_f32_contiguous", OpKind::kVectorAdd, f32, {{70001}}, {{70001}}, {{70001}}},
        {"relu_f16_slope_transposed", OpKind::kRelu, f16, {{257, 300}}, {{257, 300}, {1, 257}}, {}, 0, 0.1f},
        {"relu_f32_in_place", OpKind::kRelu, f32, {{70001}}, {{70001}}, {}, 0, 0.0f, true},
        {"reduce_sum_f32_rows", OpKind::kReduceSum, f32, {{300}}, {{300, 257}}, {}, 1},
        {"reduce_sum_f32_cols", OpKind::kReduceSum, f32, {{257}}, {{300, 257}}, {}, 0},
        {"reduce_sum_bf16_middle", OpKind::kReduceSum, bf16, {{3, 7}}, {{3, 5000, 7}}, {}, 1},
        {"reduce_sum_f32_one_long_row", OpKind::kReduceSum, f32, {{1}}, {{1, 100003}}, {}, 1},
        {"reduce_sum_f32_long_axis_few_cols", OpKind::kReduceSum, f32, {{2}}, {{40000, 2}}, {}, 0},
        {"softmax_f32_rows", OpKind::kSoftmax, f32, {{64, 1025}}, {{64, 1025}}, {}, 1},
        {"softmax_f16_cols", OpKind::kSoftmax, f16, {{33, 65}}, {{33, 65}}, {}, 0},
        {"softmax_bf16_streaming_rows", OpKind::kSoftmax, bf16, {{2, 270000}}, {{2, 270000}}, {}, -1},
        {"softmax_f32_strided_axis", OpKind::kSoftmax, f32, {{300, 257}}, {{300, 257}}, {}, 0},
    };
}

// One case's descriptor (shared by every thread) and shared inputs.
struct Prepared {
    Case c;
    const OpSpec *op = nullptr;
    void *desc = nullptr;
    size_t workspace = 0;
    oprt_tensor_view_t out{}, in0{}, in1{};
    std::vector<unsigned char> a, b;  // input data
    size_t out_bytes = 0;
    std::vector<unsigned char> expected;  // the single-thread result

    // Runs into `out_buf` (out_bytes, poisoned first; for the in-place case a
    // copy of the input). Returns the status.
    oprt_status_t run(std::vector<unsigned char> &out_buf) const {
        std::memset(out_buf.data(), 0xFF, out_buf.size());
        std::vector<unsigned char> ws(workspace);
        const void *x = a.data(), *y = b.empty() ? nullptr : b.data();
        void *o = out_buf.data();
        if (c.in_place) {
            std::memcpy(out_buf.data(), a.data(), a.size());
            x = o;
        }
        return op->execute(desc, workspace ? ws.data() : nullptr, workspace, o, x, y);
    }
};

class CpuConcurrency : public ::testing::Test {
protected:
    void SetUp() override {
        ASSERT_EQ(oprt_get_backend(&saved_), OPRT_SUCCESS);
        ASSERT_EQ(oprt_set_backend(OPRT_BACKEND_CPU), OPRT_SUCCESS);
        uint32_t seed = 1;
        for (const Case &c : cases()) {
            Prepared p;
            p.c = c;
            p.op = &op_spec(c.kind);
            p.out = make_view(c.dtype, c.out.shape, c.out.strides);
            p.in0 = make_view(c.dtype, c.in0.shape, c.in0.strides);
            p.in1 = make_view(c.dtype, c.in1.shape, c.in1.strides);
            ASSERT_EQ(p.op->create(&p.desc, &p.out, &p.in0, p.op->num_inputs > 1 ? &p.in1 : nullptr, c.axis,
                                   c.slope),
                      OPRT_SUCCESS)
                << c.name << ": " << oprt_last_error_message();
            ASSERT_EQ(p.op->workspace(p.desc, &p.workspace), OPRT_SUCCESS) << c.name;
            p.a = random_buffer(c.dtype, extent_elems(c.in0), seed++);
            if (p.op->num_inputs > 1) p.b = random_buffer(c.dtype, extent_elems(c.in1), seed++);
            p.out_bytes = size_t(extent_elems(c.out) * dtype_bytes(c.dtype));
            p.expected.resize(p.out_bytes);
            ASSERT_EQ(p.run(p.expected), OPRT_SUCCESS) << c.name << ": " << oprt_last_error_message();
            prepared_.push_back(std::move(p));
        }
    }
    void TearDown() override {
        for (Prepared &p : prepared_) EXPECT_EQ(p.op->destroy(p.desc), OPRT_SUCCESS);
        oprt_set_backend(saved_);
    }

    std::vector<Prepared> prepared_;
    oprt_backend_t saved_ = OPRT_BACKEND_AUTO;
};

TEST_F(CpuConcurrency, SharedDescriptorsGiveTheSingleThreadResults) {
    Barrier start(kThreads);
    std::vector<std::string> failures(kThreads);
    std::vector<std::thread> threads;
    for (int t = 0; t < kThreads; ++t)
        threads.emplace_back([&, t] {
            // Descriptors run on the backend recorded at creation, whatever
            // this thread's current backend is.
            oprt_set_backend(t % 2 ? OPRT_BACKEND_CPU : OPRT_BACKEND_AUTO);
            std::vector<unsigned char> out;
            start.arrive_and_wait();
            for (int it = 0; it < kIterations; ++it)
                for (size_t k = 0; k < prepared_.size(); ++k) {
                    // Threads walk the cases in different orders: different ops overlap too.
                    const Prepared &p = prepared_[(k + size_t(t)) % prepared_.size()];
                    out.assign(p.out_bytes, 0);
                    const oprt_status_t s = p.run(out);
                    if (s != OPRT_SUCCESS)
                        failures[t] += std::string(p.c.name) + ": " + oprt_last_error_message() + "\n";
                    else if (std::memcmp(out.data(), p.expected.data(), p.out_bytes) != 0)
                        failures[t] += std::string(p.c.name) + ": differs from the single-thread result\n";
                }
        });
    for (std::thread &th : threads) th.join();
    for (int t = 0; t < kThreads; ++t) EXPECT_EQ(failures[t], "") << "thread " << t;
}

// An unavailable backend set on one thread fails creation there only; error
// messages stay with the thread that caused them.
TEST_F(CpuConcurrency, BackendAndErrorMessageArePerThread) {
    oprt_backend_t unavailable = OPRT_BACKEND_AUTO;
    for (oprt_backend_t b : {OPRT_BACKEND_METAX, OPRT_BACKEND_NVIDIA}) {
        int available = 1;
        ASSERT_EQ(oprt_backend_is_available(b, &available), OPRT_SUCCESS);
        if (!available) unavailable = b;
    }
    Barrier errors_set(kThreads), checked(kThreads);
    std::vector<std::string> failures(kThreads);
    std::vector<std::thread> threads;
    for (int t = 0; t < kThreads; ++t)
        threads.emplace_back([&, t] {
            std::string &fail = failures[t];
            const bool odd = t % 2 == 1 && unavailable != OPRT_BACKEND_AUTO;
            const oprt_backend_t mine = odd ? unavailable : OPRT_BACKEND_CPU;
            oprt_set_backend(mine);
            const oprt_tensor_view_t v = make_view(OPRT_DTYPE_F32, {4, 5});
            std::vector<float> x(20, 1.5f), y(20, 0.0f);
            for (int it = 0; it < 200; ++it) {
                oprt_copy_descriptor_t d = nullptr;
                const oprt_status_t s = oprt_create_copy_descriptor(&d, &v, &v);
                oprt_backend_t now = OPRT_BACKEND_AUTO;
                oprt_get_backend(&now);
                if (now != mine) fail += "the current backend changed under this thread\n";
                if (odd) {
                    if (s != OPRT_ERR_BACKEND_UNAVAILABLE) fail += "create on an unavailable backend did not fail\n";
                    continue;
                }
                if (s != OPRT_SUCCESS) {
                    fail += std::string("create failed: ") + oprt_last_error_message() + "\n";
                    continue;
                }
                if (oprt_execute_copy(d, nullptr, 0, y.data(), x.data(), nullptr) != OPRT_SUCCESS || y != x)
                    fail += "execute failed or gave a wrong result\n";
                oprt_destroy_copy_descriptor(d);
            }
            // A failure naming this thread's own value, then every thread fails at once.
            oprt_set_backend(OPRT_BACKEND_CPU);
            const oprt_tensor_view_t in = make_view(OPRT_DTYPE_F32, {3, 4});
            oprt_softmax_descriptor_t d = nullptr;
            const std::string mark = "axis = " + std::to_string(1000 + t) + " ";
            if (oprt_create_softmax_descriptor(&d, &in, &in, 1000 + t) != OPRT_ERR_INVALID_ARG)
                fail += "a bad axis was accepted\n";
            errors_set.arrive_and_wait();
            if (std::string(oprt_last_error_message()).find(mark) == std::string::npos)
                fail += std::string("message is not this thread's: ") + oprt_last_error_message() + "\n";
            checked.arrive_and_wait();
        });
    for (std::thread &th : threads) th.join();
    for (int t = 0; t < kThreads; ++t) EXPECT_EQ(failures[t], "") << "thread " << t;
}

}  // namespace
