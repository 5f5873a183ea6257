// Concurrency on the nvidia backend: 8 host threads x 4 streams each execute
// shared descriptors of every operator at once (each (thread, stream) with its
// own outputs and workspace), and must get bit for bit the single-thread
// result. The threads start cold, before any single-thread run, so the
// backend's lazy first-use setup (kernel attributes, device properties) also
// runs concurrently. Skips with the reason when no CUDA device is visible.
#include <cstring>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "../test_barrier.h"
#include "nvidia_test_support.h"

namespace nvt {
namespace {

constexpr int kThreads = 8;
constexpr int kStreams = 4;
constexpr int kIterations = 3;

using oprt_test::Barrier;

enum class Kind { kCopy, kAdd, kRelu, kSum, kSoftmax };

struct Layout {
    std::vector<int64_t> shape = {}, strides = {};  // strides empty: row-major
    int64_t offset = 0;                   // elements before element 0 (misaligned)
};

struct Case {
    const char *name;
    Kind kind;
    oprt_dtype_t dtype;
    Layout out = {}, in0 = {}, in1 = {};
    int64_t axis = 0;
    float slope = 0.0f;
    bool in_place = false;  // out is in0's layout and starts as a copy of it
};

std::vector<Case> cases() {
    const oprt_dtype_t f32 = OPRT_DTYPE_F32, f16 = OPRT_DTYPE_F16, bf16 = OPRT_DTYPE_BF16;
    const int64_t n = (1 << 20) + 3;
    return {
        {"copy_f32_contiguous", Kind::kCopy, f32, {{n}}, {{n}}, {}},
        {"copy_f16_transposed", Kind::kCopy, f16, {{513, 1025}}, {{513, 1025}, {1, 513}}, {}},
        {"vector_add_bf16_bias", Kind::kAdd, bf16, {{1024, 1000}}, {{1024, 1000}}, {{1000}}},
        {"vector_add_f32_misaligned", Kind::kAdd, f32, {{65537}, {}, 1}, {{65537}, {}, 1}, {{65537}, {}, 3}},
        {"relu_f16_slope", Kind::kRelu, f16, {{4099}}, {{4099}}, {}, 0, 0.1f},
        {"relu_f32_in_place", Kind::kRelu, f32, {{70001}, {}, 1}, {{70001}, {}, 1}, {}, 0, 0.0f, true},
        {"reduce_sum_f32_two_long_rows", Kind::kSum, f32, {{2}}, {{2, 1 << 20}}, {}, 1},
        {"reduce_sum_bf16_columns", Kind::kSum, bf16, {{1024}}, {{4096, 1024}}, {}, 0},
        {"reduce_sum_f16_rows", Kind::kSum, f16, {{333}}, {{333, 777}}, {}, 1},
        {"reduce_sum_f32_everything", Kind::kSum, f32, {{}}, {{1 << 22}}, {}, 0},
        {"softmax_f32_few_long_rows", Kind::kSoftmax, f32, {{4, 300000}}, {{4, 300000}}, {}, 1},
        {"softmax_f16_rows", Kind::kSoftmax, f16, {{1024, 1024}}, {{1024, 1024}}, {}, 1},
        {"softmax_bf16_columns", Kind::kSoftmax, bf16, {{64, 4096}}, {{64, 4096}}, {}, 0},
        {"softmax_f32_short_rows", Kind::kSoftmax, f32, {{1000, 33}}, {{1000, 33}}, {}, 1},
    };
}

int num_inputs(Kind k) { return k == Kind::kAdd ? 2 : 1; }

// One case: its descriptor, shared by every thread and stream, and its inputs.
struct Prepared {
    Case c;
    void *desc = nullptr;
    size_t workspace = 0;
    std::unique_ptr<Tensor> in0, in1, out_shape;  // out_shape: geometry (and size) of an output only
    size_t out_bytes = 0;

    oprt_status_t create() {
        const oprt_tensor_view_t o = out_shape->view(), a = in0->view();
        switch (c.kind) {
        case Kind::kCopy: return oprt_create_copy_descriptor(reinterpret_cast<oprt_copy_descriptor_t *>(&desc), &o, &a);
        case Kind::kAdd: {
            const oprt_tensor_view_t b = in1->view();
            return oprt_create_vector_add_descriptor(reinterpret_cast<oprt_vector_add_descriptor_t *>(&desc), &o, &a, &b);
        }
        case Kind::kRelu:
            return oprt_create_relu_descriptor(reinterpret_cast<oprt_relu_descriptor_t *>(&desc), &o, &a, c.slope);
        case Kind::kSum:
            return oprt_create_reduce_sum_descriptor(reinterpret_cast<oprt_reduce_sum_descriptor_t *>(&desc), &o, &a,
                                                     c.axis);
        default:
            return oprt_create_softmax_descriptor(reinterpret_cast<oprt_softmax_descriptor_t *>(&desc), &o, &a, c.axis);
        }
    }
    oprt_status_t workspace_size() {
        switch (c.kind) {
        case Kind::kCopy: return oprt_get_copy_workspace_size(static_cast<oprt_copy_descriptor_t>(desc), &workspace);
        case Kind::kAdd: return oprt_get_vector_add_workspace_size(static_cast<oprt_vector_add_descriptor_t>(desc), &workspace);
        case Kind::kRelu: return oprt_get_relu_workspace_size(static_cast<oprt_relu_descriptor_t>(desc), &workspace);
        case Kind::kSum: return oprt_get_reduce_sum_workspace_size(static_cast<oprt_reduce_sum_descriptor_t>(desc), &workspace);
        default: return oprt_get_softmax_workspace_size(static_cast<oprt_softmax_descriptor_t>(desc), &workspace);
        }
    }
    oprt_status_t destroy() {
        switch (c.kind) {
        case Kind::kCopy: return oprt_destroy_copy_descriptor(static_cast<oprt_copy_descriptor_t>(desc));
        case Kind::kAdd: return oprt_destroy_vector_add_descriptor(static_cast<oprt_vector_add_descriptor_t>(desc));
        case Kind::kRelu: return oprt_destroy_relu_descriptor(static_cast<oprt_relu_descriptor_t>(desc));
        case Kind::kSum: return oprt_destroy_reduce_sum_descriptor(static_cast<oprt_reduce_sum_descriptor_t>(desc));
        default: return oprt_destroy_softmax_descriptor(static_cast<oprt_softmax_descriptor_t>(desc));
        }
    }

    // Enqueues one run into `out_storage` (out_bytes, poisoned first, or a copy
    // of the input in place) on `stream`.
    oprt_status_t enqueue(void *out_storage, void *ws, cudaStream_t stream, std::string *error) const {
        cudaError_t e = c.in_place ? cudaMemcpyAsync(out_storage, in0->dev.get(), out_bytes, cudaMemcpyDeviceToDevice, stream)
                                   : cudaMemsetAsync(out_storage, 0xFF, out_bytes, stream);
        if (e != cudaSuccess) {
            *error = std::string("poison: ") + cudaGetErrorString(e);
            return OPRT_ERR_RUNTIME;
        }
        void *o = static_cast<unsigned char *>(out_storage) + out_shape->offset * out_shape->esize();
        const void *a = c.in_place ? o : in0->data();
        oprt_status_t s;
        switch (c.kind) {
        case Kind::kCopy: s = oprt_execute_copy(static_cast<oprt_copy_descriptor_t>(desc), ws, workspace, o, a, stream); break;
        case Kind::kAdd:
            s = oprt_execute_vector_add(static_cast<oprt_vector_add_descriptor_t>(desc), ws, workspace, o, a, in1->data(),
                                        stream);
            break;
        case Kind::kRelu: s = oprt_execute_relu(static_cast<oprt_relu_descriptor_t>(desc), ws, workspace, o, a, stream); break;
        case Kind::kSum:
            s = oprt_execute_reduce_sum(static_cast<oprt_reduce_sum_descriptor_t>(desc), ws, workspace, o, a, stream);
            break;
        default: s = oprt_execute_softmax(static_cast<oprt_softmax_descriptor_t>(desc), ws, workspace, o, a, stream); break;
        }
        if (s != OPRT_SUCCESS) *error = oprt_last_error_message();
        return s;
    }
};

class NvidiaConcurrency : public ::testing::Test {
protected:
    void SetUp() override {
        NVT_SKIP_WITHOUT_CUDA();
        NVT_CUDA_OK(cudaGetDevice(&device_));
        uint32_t seed = 11;
        for (const Case &c : cases()) {
            auto p = std::make_unique<Prepared>();
            p->c = c;
            p->in0 = std::make_unique<Tensor>();
            make_tensor(*p->in0, c.dtype, c.in0.shape, c.in0.strides, c.in0.offset, Fill::kUniform, seed++);
            if (num_inputs(c.kind) > 1) {
                p->in1 = std::make_unique<Tensor>();
                make_tensor(*p->in1, c.dtype, c.in1.shape, c.in1.strides, c.in1.offset, Fill::kUniform, seed++);
            }
            p->out_shape = std::make_unique<Tensor>();
            make_tensor(*p->out_shape, c.dtype, c.out.shape, c.out.strides, c.out.offset, Fill::kPoison);
            ASSERT_FALSE(HasFatalFailure());
            p->out_bytes = p->out_shape->host.size();
            NVT_OPRT_OK(p->create());
            NVT_OPRT_OK(p->workspace_size());
            prepared_.push_back(std::move(p));
        }
    }
    void TearDown() override {
        for (auto &p : prepared_) EXPECT_EQ(p->destroy(), OPRT_SUCCESS);
    }

    NvidiaBackend backend_;  // descriptors made in SetUp run on the GPU
    int device_ = 0;
    std::vector<std::unique_ptr<Prepared>> prepared_;
};

TEST_F(NvidiaConcurrency, EightThreadsFourStreamsGiveTheSingleThreadResults) {
    const size_t num_cases = prepared_.size();
    // first[t][s][k]: thread t's first result for case k on its stream s.
    std::vector<std::vector<std::vector<std::vector<unsigned char>>>> first(
        kThreads, std::vector<std::vector<std::vector<unsigned char>>>(kStreams,
                                                                       std::vector<std::vector<unsigned char>>(num_cases)));
    std::vector<std::string> failures(kThreads);
    Barrier start(kThreads);
    std::vector<std::thread> threads;
    for (int t = 0; t < kThreads; ++t)
        threads.emplace_back([&, t] {
            std::string &fail = failures[t];
            auto cuda_ok = [&](cudaError_t e, const char *what) {
                if (e != cudaSuccess) fail += std::string(what) + ": " + cudaGetErrorString(e) + "\n";
                return e == cudaSuccess;
            };
            // A descriptor runs where it was created, whatever this thread's backend.
            oprt_set_backend(t % 2 ? OPRT_BACKEND_CPU : OPRT_BACKEND_AUTO);
            if (!cuda_ok(cudaSetDevice(device_), "cudaSetDevice")) {
                start.arrive_and_wait();
                return;
            }
            cudaStream_t streams[kStreams] = {};
            std::vector<std::vector<DeviceBuffer>> outs(kStreams), wss(kStreams);
            for (int s = 0; s < kStreams; ++s) {
                cuda_ok(cudaStreamCreateWithFlags(&streams[s], cudaStreamNonBlocking), "cudaStreamCreate");
                outs[s].resize(num_cases);
                wss[s].resize(num_cases);
                for (size_t k = 0; k < num_cases; ++k) {
                    cuda_ok(outs[s][k].allocate(prepared_[k]->out_bytes), "cudaMalloc");
                    if (prepared_[k]->workspace) cuda_ok(wss[s][k].allocate(prepared_[k]->workspace), "cudaMalloc");
                }
            }
            start.arrive_and_wait();  // all threads launch at once, cold
            std::vector<unsigned char> host;
            for (int it = 0; it < kIterations && fail.empty(); ++it) {
                for (size_t i = 0; i < num_cases; ++i) {
                    const size_t k = (i + size_t(t)) % num_cases;  // different ops overlap, too
                    for (int s = 0; s < kStreams; ++s) {
                        std::string error;
                        if (prepared_[k]->enqueue(outs[s][k].get(), prepared_[k]->workspace ? wss[s][k].get() : nullptr,
                                                  streams[s], &error) != OPRT_SUCCESS)
                            fail += std::string(prepared_[k]->c.name) + ": " + error + "\n";
                    }
                }
                for (int s = 0; s < kStreams; ++s) cuda_ok(cudaStreamSynchronize(streams[s]), "cudaStreamSynchronize");
                for (int s = 0; s < kStreams; ++s)
                    for (size_t k = 0; k < num_cases; ++k) {
                        host.resize(prepared_[k]->out_bytes);
                        cuda_ok(cudaMemcpy(host.data(), outs[s][k].get(), host.size(), cudaMemcpyDeviceToHost),
                                "cudaMemcpy");
                        if (it == 0) first[t][s][k] = host;
                        else if (host != first[t][s][k])
                            fail += std::string(prepared_[k]->c.name) + ": stream " + std::to_string(s) +
                                    " iteration " + std::to_string(it) + " differs from iteration 0\n";
                    }
            }
            for (int s = 0; s < kStreams; ++s)
                if (streams[s]) cudaStreamDestroy(streams[s]);
        });
    for (std::thread &th : threads) th.join();
    for (int t = 0; t < kThreads; ++t) EXPECT_EQ(failures[t], "") << "thread " << t;
    if (HasFailure()) return;

    // The single-thread result, on the legacy default stream, after the threads.
    for (size_t k = 0; k < num_cases; ++k) {
        const Prepared &p = *prepared_[k];
        SCOPED_TRACE(p.c.name);
        DeviceBuffer out(p.out_bytes), ws(p.workspace);
        std::string error;
        ASSERT_EQ(p.enqueue(out.get(), p.workspace ? ws.get() : nullptr, nullptr, &error), OPRT_SUCCESS) << error;
        NVT_CUDA_OK(cudaDeviceSynchronize());
        std::vector<unsigned char> expected(p.out_bytes);
        NVT_CUDA_OK(cudaMemcpy(expected.data(), out.get(), expected.size(), cudaMemcpyDeviceToHost));
        // Sanity: the single-thread run wrote the output (no poison left in the first element).
        const size_t first_elem = size_t(p.out_shape->offset) * p.out_shape->esize();
        bool poisoned = true;
        for (size_t b = 0; b < p.out_shape->esize(); ++b) poisoned = poisoned && expected[first_elem + b] == 0xFF;
        EXPECT_FALSE(poisoned) << "element 0 was not written";
        int mismatches = 0;
        for (int t = 0; t < kThreads; ++t)
            for (int s = 0; s < kStreams; ++s)
                if (first[t][s][k] != expected && ++mismatches <= 4)
                    ADD_FAILURE() << "thread " << t << " stream " << s << " differs from the single-thread result";
        EXPECT_EQ(mismatches, 0);
    }
}

}  // namespace
}  // namespace nvt
