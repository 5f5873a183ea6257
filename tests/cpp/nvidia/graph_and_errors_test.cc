// execute() is stream-ordered and capturable: every operator (including the
// plans that use workspace) is captured into one CUDA graph on a non-default
// stream in global capture mode (which rejects synchronizing or allocating
// calls), replayed on new input data, and checked. Also: host memory handed to
// the nvidia backend is rejected with OPRT_ERR_INVALID_ARG and a message.
#include <cmath>
#include <string>
#include <vector>

#include "op_cases.h"

namespace nvt {
namespace {

class NvidiaGraph : public ::testing::Test {
protected:
    void SetUp() override { NVT_SKIP_WITHOUT_CUDA(); }
    NvidiaBackend backend_;
};

struct Refill {
    Tensor *t;
    Fill fill;
};

// Rewrites a tensor's values (new seed) and uploads them outside the graph.
void refill(Tensor &t, Fill fill, uint32_t seed, float range) {
    std::mt19937 rng(seed);
    std::uniform_real_distribution<float> uni(-range, range);
    std::uniform_int_distribution<int> ints(-8, 8);
    for (int64_t i = 0; i < t.storage_elems(); ++i) t.set(i, fill == Fill::kUniform ? uni(rng) : float(ints(rng)));
    upload(t);
}

TEST_F(NvidiaGraph, EveryOperatorCapturedAndReplayed) {
    for (oprt_dtype_t dt : all_dtypes()) {
        SCOPED_TRACE(dtype_name(dt));
        // Inputs and outputs; reduce/softmax shapes take their workspace paths.
        Tensor a, b, c_out, add_out, relu_out, sum_all_in, sum_all_out, sum_col_in, sum_col_out, sm_in, sm_out,
            sm_small_in, sm_small_out, sm_cl_in, sm_cl_out;
        make_tensor(a, dt, {4097, 33}, {}, 0, Fill::kUniform, 1);
        make_tensor(b, dt, {33}, {}, 0, Fill::kUniform, 2);
        make_tensor(c_out, dt, {4097, 33}, {}, 0, Fill::kPoison);
        make_tensor(add_out, dt, {4097, 33}, {}, 0, Fill::kPoison);
        make_tensor(relu_out, dt, {4097, 33}, {}, 0, Fill::kPoison);
        make_tensor(sum_all_in, dt, {1 << 22}, {}, 0, Fill::kIntegers, 3);
        make_tensor(sum_all_out, dt, {}, {}, 0, Fill::kPoison);
        make_tensor(sum_col_in, dt, {1000, 37}, {}, 0, Fill::kIntegers, 4);
        make_tensor(sum_col_out, dt, {37}, {}, 0, Fill::kPoison);
        make_tensor(sm_in, dt, {2, 1 << 20}, {}, 0, Fill::kUniform, 5);
        make_tensor(sm_out, dt, {2, 1 << 20}, {}, 0, Fill::kPoison);
        make_tensor(sm_small_in, dt, {37, 129}, {}, 0, Fill::kUniform, 6);
        make_tensor(sm_small_out, dt, {37, 129}, {}, 0, Fill::kPoison);
        // Rows in one block's shared memory (dynamic shared memory above 48 KB)
        make_tensor(sm_cl_in, dt, {150, 40000}, {}, 0, Fill::kUniform, 7);
        make_tensor(sm_cl_out, dt, {150, 40000}, {}, 0, Fill::kPoison);
        ASSERT_FALSE(HasFatalFailure());

        const oprt_tensor_view_t av = a.view(), bv = b.view(), cv = c_out.view(), addv = add_out.view(),
                                 reluv = relu_out.view(), sai = sum_all_in.view(), sao = sum_all_out.view(),
                                 sci = sum_col_in.view(), sco = sum_col_out.view(), smi = sm_in.view(),
                                 smo = sm_out.view(), ssi = sm_small_in.view(), sso = sm_small_out.view(),
                                 sci2 = sm_cl_in.view(), sco2 = sm_cl_out.view();
        oprt_copy_descriptor_t copy_d;
        oprt_vector_add_descriptor_t add_d;
        oprt_relu_descriptor_t relu_d;
        oprt_reduce_sum_descriptor_t sum_all_d, sum_col_d;
        oprt_softmax_descriptor_t sm_d, sm_small_d, sm_cl_d;
        NVT_OPRT_OK(oprt_create_copy_descriptor(&copy_d, &cv, &av));
        NVT_OPRT_OK(oprt_create_vector_add_descriptor(&add_d, &addv, &av, &bv));
        NVT_OPRT_OK(oprt_create_relu_descriptor(&relu_d, &reluv, &av, 0.25f));
        NVT_OPRT_OK(oprt_create_reduce_sum_descriptor(&sum_all_d, &sao, &sai, 0));
        NVT_OPRT_OK(oprt_create_reduce_sum_descriptor(&sum_col_d, &sco, &sci, 0));
        NVT_OPRT_OK(oprt_create_softmax_descriptor(&sm_d, &smo, &smi, 1));
        NVT_OPRT_OK(oprt_create_softmax_descriptor(&sm_small_d, &sso, &ssi, 1));
        NVT_OPRT_OK(oprt_create_softmax_descriptor(&sm_cl_d, &sco2, &sci2, 1));
        size_t ws_sum_all = 0, ws_sum_col = 0, ws_sm = 0, ws_sm_small = 0, ws_sm_cl = 0;
        NVT_OPRT_OK(oprt_get_reduce_sum_workspace_size(sum_all_d, &ws_sum_all));
        NVT_OPRT_OK(oprt_get_reduce_sum_workspace_size(sum_col_d, &ws_sum_col));
        NVT_OPRT_OK(oprt_get_softmax_workspace_size(sm_d, &ws_sm));
        NVT_OPRT_OK(oprt_get_softmax_workspace_size(sm_small_d, &ws_sm_small));
        NVT_OPRT_OK(oprt_get_softmax_workspace_size(sm_cl_d, &ws_sm_cl));
        EXPECT_GT(ws_sum_all, 0u) << "the full reduction is expected to take the two-pass split path";
        DeviceBuffer w1(ws_sum_all), w2(ws_sum_col), w3(ws_sm), w4(ws_sm_small), w5(ws_sm_cl);

        cudaStream_t stream;
        NVT_CUDA_OK(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking));
        auto execute_all = [&]() {
            NVT_OPRT_OK(oprt_execute_copy(copy_d, nullptr, 0, c_out.data(), a.data(), stream));
            NVT_OPRT_OK(oprt_execute_vector_add(add_d, nullptr, 0, add_out.data(), a.data(), b.data(), stream));
            NVT_OPRT_OK(oprt_execute_relu(relu_d, nullptr, 0, relu_out.data(), a.data(), stream));
            NVT_OPRT_OK(oprt_execute_reduce_sum(sum_all_d, w1.get(), ws_sum_all, sum_all_out.data(),
                                                sum_all_in.data(), stream));
            NVT_OPRT_OK(oprt_execute_reduce_sum(sum_col_d, w2.get(), ws_sum_col, sum_col_out.data(),
                                                sum_col_in.data(), stream));
            NVT_OPRT_OK(oprt_execute_softmax(sm_d, w3.get(), ws_sm, sm_out.data(), sm_in.data(), stream));
            NVT_OPRT_OK(oprt_execute_softmax(sm_small_d, w4.get(), ws_sm_small, sm_small_out.data(),
                                             sm_small_in.data(), stream));
            NVT_OPRT_OK(oprt_execute_softmax(sm_cl_d, w5.get(), ws_sm_cl, sm_cl_out.data(), sm_cl_in.data(), stream));
        };
        // One eager run first, as real code does before capturing: it loads the
        // kernels (lazy module loading) and sets per-device attributes.
        execute_all();
        ASSERT_FALSE(HasFatalFailure());
        NVT_CUDA_OK(cudaStreamSynchronize(stream));

        cudaGraph_t graph;
        NVT_CUDA_OK(cudaStreamBeginCapture(stream, cudaStreamCaptureModeGlobal));
        execute_all();
        cudaGraph_t captured = nullptr;
        const cudaError_t end = cudaStreamEndCapture(stream, &captured);
        ASSERT_FALSE(HasFatalFailure()) << "an execute failed during capture: " << oprt_last_error_message();
        NVT_CUDA_OK(end);
        graph = captured;
        cudaGraphExec_t exec;
        NVT_CUDA_OK(cudaGraphInstantiate(&exec, graph, 0));

        for (uint32_t round = 0; round < 2; ++round) {
            SCOPED_TRACE("replay " + std::to_string(round));
            const uint32_t seed = 100 + 10 * round;
            refill(a, Fill::kUniform, seed + 1, 4.0f);
            refill(b, Fill::kUniform, seed + 2, 4.0f);
            refill(sum_all_in, Fill::kIntegers, seed + 3, 0);
            refill(sum_col_in, Fill::kIntegers, seed + 4, 0);
            refill(sm_in, Fill::kUniform, seed + 5, 6.0f);
            refill(sm_small_in, Fill::kUniform, seed + 6, 6.0f);
            refill(sm_cl_in, Fill::kUniform, seed + 7, 6.0f);
            for (Tensor *t :
                 {&c_out, &add_out, &relu_out, &sum_all_out, &sum_col_out, &sm_out, &sm_small_out, &sm_cl_out})
                poison(*t);
            NVT_CUDA_OK(cudaGraphLaunch(exec, stream));
            NVT_CUDA_OK(cudaStreamSynchronize(stream));
            for (Tensor *t :
                 {&c_out, &add_out, &relu_out, &sum_all_out, &sum_col_out, &sm_out, &sm_small_out, &sm_cl_out})
                download(*t);

            const Tol r = rounding_tol(dt);
            expect_output(c_out, [&](int64_t i) { return double(a.get(i)); }, [](int64_t) { return Tol{0, 0}; },
                          "graph copy");
            expect_output(add_out, [&](int64_t i) { return double(a.get(i)) + b.get(i % 33); },
                          [&](int64_t) { return r; }, "graph vector_add");
            expect_output(relu_out,
                          [&](int64_t i) {
                              const double x = a.get(i);
                              return x > 0 ? x : 0.25 * x;
                          },
                          [&](int64_t) { return r; }, "graph relu");
            double total = 0;
            for (int64_t i = 0; i < sum_all_in.numel(); ++i) total += sum_all_in.get(i);
            expect_output(sum_all_out, [&](int64_t) { return total; }, [&](int64_t) { return r; }, "graph sum all");
            expect_output(sum_col_out,
                          [&](int64_t i) {
                              double s = 0;
                              for (int64_t k = 0; k < 1000; ++k) s += sum_col_in.get(k * 37 + i);
                              return s;
                          },
                          [&](int64_t) { return r; }, "graph sum axis 0");
            auto softmax_want = [](const Tensor &in, int64_t cols) {
                std::vector<double> want(size_t(in.numel()));
                for (int64_t row = 0; row < in.numel() / cols; ++row) {
                    double m = -INFINITY, s = 0;
                    for (int64_t k = 0; k < cols; ++k) m = std::max(m, double(in.get(row * cols + k)));
                    for (int64_t k = 0; k < cols; ++k) s += std::exp(double(in.get(row * cols + k)) - m);
                    for (int64_t k = 0; k < cols; ++k)
                        want[size_t(row * cols + k)] = std::exp(double(in.get(row * cols + k)) - m) / s;
                }
                return want;
            };
            const auto want_sm = softmax_want(sm_in, 1 << 20);
            const auto want_small = softmax_want(sm_small_in, 129);
            const auto want_cl = softmax_want(sm_cl_in, 40000);
            const Tol st = softmax_tol(dt);
            expect_output(sm_out, [&](int64_t i) { return want_sm[size_t(i)]; }, [&](int64_t) { return st; },
                          "graph softmax long rows");
            expect_output(sm_small_out, [&](int64_t i) { return want_small[size_t(i)]; },
                          [&](int64_t) { return st; }, "graph softmax short rows");
            expect_output(sm_cl_out, [&](int64_t i) { return want_cl[size_t(i)]; }, [&](int64_t) { return st; },
                          "graph softmax rows in shared memory");
        }

        NVT_CUDA_OK(cudaGraphExecDestroy(exec));
        NVT_CUDA_OK(cudaGraphDestroy(graph));
        NVT_CUDA_OK(cudaStreamDestroy(stream));
        oprt_destroy_copy_descriptor(copy_d);
        oprt_destroy_vector_add_descriptor(add_d);
        oprt_destroy_relu_descriptor(relu_d);
        oprt_destroy_reduce_sum_descriptor(sum_all_d);
        oprt_destroy_reduce_sum_descriptor(sum_col_d);
        oprt_destroy_softmax_descriptor(sm_d);
        oprt_destroy_softmax_descriptor(sm_small_d);
        oprt_destroy_softmax_descriptor(sm_cl_d);
    }
}

// ---- Dependent launches: each kernel reads what the one before it wrote -------------
// On sm_90 kernels are launched overlapped with the previous one (programmatic
// dependent launch): a kernel that touched memory before waiting for the
// previous grid would read stale data here. A chain of operators, each reading
// the previous result, run back to back without synchronizing, eagerly and as
// a replayed graph. Integer values keep f32 results exact.
TEST_F(NvidiaGraph, DependentChainSeesEveryPreviousResult) {
    const int64_t rows = 4097, cols = 33, n = rows * cols, long_cols = 262144;
    constexpr int kRounds = 24;
    Tensor x0, x, y, ones, row_sums, total, z, sm, big, big_copy, big_sm;
    make_tensor(x0, OPRT_DTYPE_F32, {n}, {}, 0, Fill::kIntegers, 11);
    make_tensor(x, OPRT_DTYPE_F32, {n}, {}, 0, Fill::kPoison);
    make_tensor(y, OPRT_DTYPE_F32, {n}, {}, 0, Fill::kPoison);
    make_tensor(ones, OPRT_DTYPE_F32, {n}, {}, 0, Fill::kPoison);
    for (int64_t i = 0; i < n; ++i) ones.set(i, 1.0f);
    upload(ones);
    make_tensor(row_sums, OPRT_DTYPE_F32, {rows}, {}, 0, Fill::kPoison);
    make_tensor(total, OPRT_DTYPE_F32, {}, {}, 0, Fill::kPoison);
    make_tensor(z, OPRT_DTYPE_F32, {n}, {}, 0, Fill::kPoison);
    make_tensor(sm, OPRT_DTYPE_F32, {rows, cols}, {}, 0, Fill::kPoison);
    make_tensor(big, OPRT_DTYPE_F32, {3, long_cols}, {}, 0, Fill::kUniform, 12, 6.0f);
    make_tensor(big_copy, OPRT_DTYPE_F32, {3, long_cols}, {}, 0, Fill::kPoison);
    make_tensor(big_sm, OPRT_DTYPE_F32, {3, long_cols}, {}, 0, Fill::kPoison);
    ASSERT_FALSE(HasFatalFailure());

    // Descriptors see the views (shapes, strides, device); executes pass the pointers.
    const oprt_tensor_view_t xv = x.view(), yv = y.view(), onesv = ones.view(), zv = z.view(), smv = sm.view(),
                             rs = row_sums.view(), tot = total.view(), bigv = big.view(), bigcv = big_copy.view(),
                             bigsv = big_sm.view();
    oprt_tensor_view_t x_mat = smv;  // x and z as (rows, cols)
    x_mat.data = x.data();
    oprt_tensor_view_t z_mat = smv;
    z_mat.data = z.data();
    oprt_tensor_view_t total_b = xv;  // the total repeated over every element
    total_b.data = total.data();
    total_b.strides[0] = 0;
    oprt_vector_add_descriptor_t add_d, add_total_d;
    oprt_copy_descriptor_t copy_d, big_copy_d;
    oprt_relu_descriptor_t relu_d;
    oprt_reduce_sum_descriptor_t row_sum_d, total_d;
    oprt_softmax_descriptor_t sm_d, big_sm_d;
    NVT_OPRT_OK(oprt_create_vector_add_descriptor(&add_d, &yv, &xv, &onesv));
    NVT_OPRT_OK(oprt_create_copy_descriptor(&copy_d, &xv, &yv));
    NVT_OPRT_OK(oprt_create_relu_descriptor(&relu_d, &yv, &xv, 1.0f));  // the identity, read and written
    NVT_OPRT_OK(oprt_create_reduce_sum_descriptor(&row_sum_d, &rs, &x_mat, 1));
    NVT_OPRT_OK(oprt_create_reduce_sum_descriptor(&total_d, &tot, &rs, 0));
    NVT_OPRT_OK(oprt_create_vector_add_descriptor(&add_total_d, &zv, &xv, &total_b));
    NVT_OPRT_OK(oprt_create_softmax_descriptor(&sm_d, &smv, &z_mat, 1));
    NVT_OPRT_OK(oprt_create_copy_descriptor(&big_copy_d, &bigcv, &bigv));
    NVT_OPRT_OK(oprt_create_softmax_descriptor(&big_sm_d, &bigsv, &bigcv, 1));
    size_t ws_rows = 0, ws_total = 0, ws_sm = 0, ws_big = 0;
    NVT_OPRT_OK(oprt_get_reduce_sum_workspace_size(row_sum_d, &ws_rows));
    NVT_OPRT_OK(oprt_get_reduce_sum_workspace_size(total_d, &ws_total));
    NVT_OPRT_OK(oprt_get_softmax_workspace_size(sm_d, &ws_sm));
    NVT_OPRT_OK(oprt_get_softmax_workspace_size(big_sm_d, &ws_big));
    DeviceBuffer w1(ws_rows + 1), w2(ws_total + 1), w3(ws_sm + 1), w4(ws_big + 1);

    cudaStream_t stream;
    NVT_CUDA_OK(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking));
    auto chain = [&]() {
        NVT_OPRT_OK(oprt_execute_copy(copy_d, nullptr, 0, x.data(), x0.data(), stream));
        for (int k = 0; k < kRounds; ++k) {  // x += 2 per round
            NVT_OPRT_OK(oprt_execute_vector_add(add_d, nullptr, 0, y.data(), x.data(), ones.data(), stream));
            NVT_OPRT_OK(oprt_execute_copy(copy_d, nullptr, 0, x.data(), y.data(), stream));
            NVT_OPRT_OK(oprt_execute_relu(relu_d, nullptr, 0, y.data(), x.data(), stream));
            NVT_OPRT_OK(oprt_execute_vector_add(add_d, nullptr, 0, x.data(), y.data(), ones.data(), stream));
        }
        NVT_OPRT_OK(oprt_execute_reduce_sum(row_sum_d, w1.get(), ws_rows, row_sums.data(), x.data(), stream));
        NVT_OPRT_OK(oprt_execute_reduce_sum(total_d, w2.get(), ws_total, total.data(), row_sums.data(), stream));
        NVT_OPRT_OK(oprt_execute_vector_add(add_total_d, nullptr, 0, z.data(), x.data(), total.data(), stream));
        NVT_OPRT_OK(oprt_execute_softmax(sm_d, w3.get(), ws_sm, sm.data(), z.data(), stream));
        NVT_OPRT_OK(oprt_execute_copy(big_copy_d, nullptr, 0, big_copy.data(), big.data(), stream));
        NVT_OPRT_OK(oprt_execute_softmax(big_sm_d, w4.get(), ws_big, big_sm.data(), big_copy.data(), stream));
    };
    auto check = [&](const char *how) {
        SCOPED_TRACE(how);
        for (Tensor *t : {&x, &row_sums, &total, &z, &sm, &big_sm}) download(*t);
        std::vector<double> xf(static_cast<size_t>(n)), rsum(static_cast<size_t>(rows), 0.0);
        double tsum = 0;
        for (int64_t i = 0; i < n; ++i) {
            xf[size_t(i)] = double(x0.get(i)) + 2 * kRounds;
            rsum[size_t(i / cols)] += xf[size_t(i)];
            tsum += xf[size_t(i)];
        }
        const Tol exact{0, 0};
        expect_output(x, [&](int64_t i) { return xf[size_t(i)]; }, [&](int64_t) { return exact; }, "chain x");
        expect_output(row_sums, [&](int64_t r) { return rsum[size_t(r)]; }, [&](int64_t) { return exact; },
                      "chain row sums");
        expect_output(total, [&](int64_t) { return tsum; }, [&](int64_t) { return exact; }, "chain total");
        expect_output(z, [&](int64_t i) { return xf[size_t(i)] + tsum; }, [&](int64_t) { return exact; },
                      "chain x + total");
        auto softmax_of = [](const std::function<double(int64_t)> &v, int64_t nrows, int64_t ncols) {
            std::vector<double> want(size_t(nrows * ncols));
            for (int64_t r = 0; r < nrows; ++r) {
                double m = -INFINITY, s = 0;
                for (int64_t k = 0; k < ncols; ++k) m = std::max(m, v(r * ncols + k));
                for (int64_t k = 0; k < ncols; ++k) s += std::exp(v(r * ncols + k) - m);
                for (int64_t k = 0; k < ncols; ++k) want[size_t(r * ncols + k)] = std::exp(v(r * ncols + k) - m) / s;
            }
            return want;
        };
        const auto want_sm = softmax_of([&](int64_t i) { return xf[size_t(i)] + tsum; }, rows, cols);
        const auto want_big = softmax_of([&](int64_t i) { return double(big.get(i)); }, 3, long_cols);
        const Tol st = softmax_tol(OPRT_DTYPE_F32);
        expect_output(sm, [&](int64_t i) { return want_sm[size_t(i)]; }, [&](int64_t) { return st; }, "chain softmax");
        expect_output(big_sm, [&](int64_t i) { return want_big[size_t(i)]; }, [&](int64_t) { return st; },
                      "chain long-row softmax");
    };
    auto poison_all = [&]() {
        for (Tensor *t : {&x, &y, &row_sums, &total, &z, &sm, &big_copy, &big_sm}) poison(*t);
    };

    poison_all();
    chain();
    ASSERT_FALSE(HasFatalFailure());
    NVT_CUDA_OK(cudaStreamSynchronize(stream));
    check("eager");

    cudaGraph_t graph = nullptr;
    NVT_CUDA_OK(cudaStreamBeginCapture(stream, cudaStreamCaptureModeGlobal));
    chain();
    const cudaError_t end = cudaStreamEndCapture(stream, &graph);
    ASSERT_FALSE(HasFatalFailure()) << "an execute failed during capture: " << oprt_last_error_message();
    NVT_CUDA_OK(end);
    cudaGraphExec_t exec;
    NVT_CUDA_OK(cudaGraphInstantiate(&exec, graph, 0));
    for (int replay = 0; replay < 2; ++replay) {
        poison_all();
        NVT_CUDA_OK(cudaGraphLaunch(exec, stream));
        NVT_CUDA_OK(cudaStreamSynchronize(stream));
        check(replay == 0 ? "graph replay 1" : "graph replay 2");
    }
    NVT_CUDA_OK(cudaGraphExecDestroy(exec));
    NVT_CUDA_OK(cudaGraphDestroy(graph));
    NVT_CUDA_OK(cudaStreamDestroy(stream));
    oprt_destroy_vector_add_descriptor(add_d);
    oprt_destroy_vector_add_descriptor(add_total_d);
    oprt_destroy_copy_descriptor(copy_d);
    oprt_destroy_copy_descriptor(big_copy_d);
    oprt_destroy_relu_descriptor(relu_d);
    oprt_destroy_reduce_sum_descriptor(row_sum_d);
    oprt_destroy_reduce_sum_descriptor(total_d);
    oprt_destroy_softmax_descriptor(sm_d);
    oprt_destroy_softmax_descriptor(big_sm_d);
}

// ---- Host memory is rejected, not dereferenced ---------------------------------------

class NvidiaHostPointers : public ::testing::Test {
protected:
    void SetUp() override { NVT_SKIP_WITHOUT_CUDA(); }
    NvidiaBackend backend_;
};

oprt_tensor_view_t view_1d(int64_t n) {
    oprt_tensor_view_t v{};
    v.dtype = OPRT_DTYPE_F32;
    v.ndim = 1;
    v.shape[0] = n;
    v.strides[0] = 1;
    return v;
}

void expect_rejected(oprt_status_t s, const char *arg, const char *op) {
    EXPECT_EQ(s, OPRT_ERR_INVALID_ARG) << oprt_status_string(s);
    const std::string msg = oprt_last_error_message();
    EXPECT_NE(msg.find(op), std::string::npos) << msg;
    EXPECT_NE(msg.find(std::string(arg) + " = "), std::string::npos) << msg;
    EXPECT_NE(msg.find("host"), std::string::npos) << msg;
}

TEST_F(NvidiaHostPointers, EveryOperatorRejectsHostMemory) {
    const int64_t n = 4096;
    std::vector<float> host_a(n, 1.0f), host_out(n, 0.0f);
    DeviceBuffer dev_a(n * 4), dev_b(n * 4), dev_out(n * 4);
    const oprt_tensor_view_t v = view_1d(n);
    oprt_tensor_view_t scalar{};
    scalar.dtype = OPRT_DTYPE_F32;

    oprt_copy_descriptor_t copy_d;
    NVT_OPRT_OK(oprt_create_copy_descriptor(&copy_d, &v, &v));
    expect_rejected(oprt_execute_copy(copy_d, nullptr, 0, dev_out.get(), host_a.data(), nullptr), "src",
                    "oprt_execute_copy");
    expect_rejected(oprt_execute_copy(copy_d, nullptr, 0, host_out.data(), dev_a.get(), nullptr), "dst",
                    "oprt_execute_copy");
    oprt_destroy_copy_descriptor(copy_d);

    oprt_vector_add_descriptor_t add_d;
    NVT_OPRT_OK(oprt_create_vector_add_descriptor(&add_d, &v, &v, &v));
    expect_rejected(oprt_execute_vector_add(add_d, nullptr, 0, dev_out.get(), dev_a.get(), host_a.data(), nullptr),
                    "b", "oprt_execute_vector_add");
    expect_rejected(oprt_execute_vector_add(add_d, nullptr, 0, dev_out.get(), host_a.data(), dev_b.get(), nullptr),
                    "a", "oprt_execute_vector_add");
    oprt_destroy_vector_add_descriptor(add_d);

    oprt_relu_descriptor_t relu_d;
    NVT_OPRT_OK(oprt_create_relu_descriptor(&relu_d, &v, &v, 0.0f));
    expect_rejected(oprt_execute_relu(relu_d, nullptr, 0, host_out.data(), dev_a.get(), nullptr), "out",
                    "oprt_execute_relu");
    oprt_destroy_relu_descriptor(relu_d);

    oprt_reduce_sum_descriptor_t sum_d;
    NVT_OPRT_OK(oprt_create_reduce_sum_descriptor(&sum_d, &scalar, &v, 0));
    size_t ws = 0;
    NVT_OPRT_OK(oprt_get_reduce_sum_workspace_size(sum_d, &ws));
    DeviceBuffer dev_ws(ws);
    expect_rejected(oprt_execute_reduce_sum(sum_d, dev_ws.get(), ws, dev_out.get(), host_a.data(), nullptr), "in",
                    "oprt_execute_reduce_sum");
    oprt_destroy_reduce_sum_descriptor(sum_d);

    oprt_softmax_descriptor_t sm_d;
    NVT_OPRT_OK(oprt_create_softmax_descriptor(&sm_d, &v, &v, 0));
    NVT_OPRT_OK(oprt_get_softmax_workspace_size(sm_d, &ws));
    expect_rejected(oprt_execute_softmax(sm_d, nullptr, ws, host_out.data(), dev_a.get(), nullptr), "out",
                    "oprt_execute_softmax");
    oprt_destroy_softmax_descriptor(sm_d);

    // Pinned host memory is host memory too.
    float *pinned = nullptr;
    NVT_CUDA_OK(cudaMallocHost(&pinned, n * 4));
    NVT_OPRT_OK(oprt_create_copy_descriptor(&copy_d, &v, &v));
    expect_rejected(oprt_execute_copy(copy_d, nullptr, 0, dev_out.get(), pinned, nullptr), "src", "oprt_execute_copy");
    oprt_destroy_copy_descriptor(copy_d);
    NVT_CUDA_OK(cudaFreeHost(pinned));
    // Nothing was left pending by the rejected calls.
    NVT_CUDA_OK(cudaGetLastError());
    NVT_CUDA_OK(cudaDeviceSynchronize());
}

TEST_F(NvidiaHostPointers, HostWorkspaceIsRejected) {
    const int64_t n = 1 << 22;  // the two-pass path: it needs workspace
    DeviceBuffer dev_in(n * 4), dev_out(16);
    const oprt_tensor_view_t v = view_1d(n);
    oprt_tensor_view_t scalar{};
    scalar.dtype = OPRT_DTYPE_F32;
    oprt_reduce_sum_descriptor_t d;
    NVT_OPRT_OK(oprt_create_reduce_sum_descriptor(&d, &scalar, &v, 0));
    size_t ws = 0;
    NVT_OPRT_OK(oprt_get_reduce_sum_workspace_size(d, &ws));
    ASSERT_GT(ws, 0u);
    std::vector<unsigned char> host_ws(ws);
    expect_rejected(oprt_execute_reduce_sum(d, host_ws.data(), ws, dev_out.get(), dev_in.get(), nullptr), "workspace",
                    "oprt_execute_reduce_sum");
    oprt_destroy_reduce_sum_descriptor(d);
}

TEST_F(NvidiaHostPointers, AutoBackendPicksNvidiaForDeviceMemory) {
    oprt_set_backend(OPRT_BACKEND_AUTO);
    const int64_t n = 1000;
    DeviceBuffer src(n * 4), dst(n * 4);
    std::vector<float> host(n, 2.5f), back(n, 0.0f);
    NVT_CUDA_OK(cudaMemcpy(src.get(), host.data(), n * 4, cudaMemcpyHostToDevice));
    oprt_tensor_view_t v = view_1d(n);
    v.data = dst.get();  // the data hint AUTO looks at
    oprt_copy_descriptor_t d;
    NVT_OPRT_OK(oprt_create_copy_descriptor(&d, &v, &v));
    NVT_OPRT_OK(oprt_execute_copy(d, nullptr, 0, dst.get(), src.get(), nullptr));
    NVT_CUDA_OK(cudaMemcpy(back.data(), dst.get(), n * 4, cudaMemcpyDeviceToHost));
    EXPECT_EQ(back, host);
    oprt_destroy_copy_descriptor(d);
}

TEST_F(NvidiaHostPointers, ManagedMemoryIsAccepted) {
    // Managed memory (cudaMallocManaged) is reachable from the GPU: accepted as input
    // and output, next to device memory; the launch goes to the caller's device.
    const int64_t n = 1003;
    float *in = nullptr, *out = nullptr;
    NVT_CUDA_OK(cudaMallocManaged(&in, n * 4));
    NVT_CUDA_OK(cudaMallocManaged(&out, n * 4));
    for (int64_t i = 0; i < n; ++i) in[i] = float(i % 7) - 3.0f, out[i] = std::nanf("");
    DeviceBuffer dev_out(n * 4);
    oprt_tensor_view_t v = view_1d(n);
    v.data = out;
    oprt_relu_descriptor_t d;
    NVT_OPRT_OK(oprt_create_relu_descriptor(&d, &v, &v, 0.5f));
    NVT_OPRT_OK(oprt_execute_relu(d, nullptr, 0, out, in, nullptr));           // managed -> managed
    NVT_OPRT_OK(oprt_execute_relu(d, nullptr, 0, dev_out.get(), in, nullptr));  // managed -> device
    NVT_CUDA_OK(cudaDeviceSynchronize());
    std::vector<float> back(n);
    NVT_CUDA_OK(cudaMemcpy(back.data(), dev_out.get(), n * 4, cudaMemcpyDeviceToHost));
    for (int64_t i = 0; i < n; ++i) {
        const float want = in[i] > 0.0f ? in[i] : 0.5f * in[i];
        ASSERT_EQ(out[i], want) << "managed output, element " << i;
        ASSERT_EQ(back[i], want) << "device output, element " << i;
    }
    oprt_destroy_relu_descriptor(d);
    NVT_CUDA_OK(cudaFree(in));
    NVT_CUDA_OK(cudaFree(out));
}

}  // namespace
}  // namespace nvt
