// matmul through the C API on the CPU backend: every ladder step against a float64
// reference on random data, odd sizes, every operand layout (row- and column-major,
// strided, broadcast), NaN-poisoned outputs, K = 0, and the refused arguments.
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <random>
#include <string>
#include <vector>

#include "test_support.h"

namespace {
using namespace oprt_test;

// One operand: its (rows, cols), strides and a buffer large enough for them.
struct Matrix {
    int64_t rows, cols, row_stride, col_stride;
    std::vector<float> data;
    float at(int64_t i, int64_t j) const { return data[size_t(i * row_stride + j * col_stride)]; }
    oprt_tensor_view_t view() { return make_view(OPRT_DTYPE_F32, {rows, cols}, {row_stride, col_stride}, data.data()); }
};

enum class Layout { kRowMajor, kColMajor, kPadded, kBroadcastRows };

Matrix make(int64_t rows, int64_t cols, Layout layout, std::mt19937 &rng, bool fill) {
    Matrix m{rows, cols, cols, 1, {}};
    if (layout == Layout::kColMajor) m.row_stride = 1, m.col_stride = rows;
    if (layout == Layout::kPadded) m.row_stride = 2 * cols + 3, m.col_stride = 2;
    if (layout == Layout::kBroadcastRows) m.row_stride = 0;
    const int64_t extent = rows && cols ? (rows - 1) * m.row_stride + (cols - 1) * m.col_stride + 1 : 0;
    m.data.assign(size_t(extent), std::nanf(""));  // NaN everywhere: gaps and the output start poisoned
    std::uniform_real_distribution<float> u(-1.0f, 1.0f);
    if (fill)
        for (int64_t i = 0; i < rows; ++i)
            for (int64_t j = 0; j < cols; ++j) m.data[size_t(i * m.row_stride + j * m.col_stride)] = u(rng);
    return m;
}

std::vector<std::string> cpu_variants() {
    int count = 0;
    EXPECT_EQ(oprt_list_matmul_variants(OPRT_BACKEND_CPU, nullptr, 0, &count), OPRT_SUCCESS);
    std::vector<const char *> names(static_cast<size_t>(count));
    EXPECT_EQ(oprt_list_matmul_variants(OPRT_BACKEND_CPU, names.data(), count, &count), OPRT_SUCCESS);
    return {names.begin(), names.end()};
}

// Runs variant `variant` on out = a @ b and compares with a float64 sum, within the f32
// accumulation's error (sqrt(K) roundings of |a| @ |b|).
void check(const std::string &variant, Matrix &a, Matrix &b, Matrix &out) {
    const std::string where = variant + " " + std::to_string(a.rows) + "x" + std::to_string(a.cols) + "x" +
                              std::to_string(b.cols);
    BackendGuard cpu(OPRT_BACKEND_CPU);
    const oprt_tensor_view_t vo = out.view(), va = a.view(), vb = b.view();
    oprt_matmul_descriptor_t desc = nullptr;
    ASSERT_EQ(oprt_create_matmul_descriptor(&desc, &vo, &va, &vb), OPRT_SUCCESS) << oprt_last_error_message();
    ASSERT_EQ(oprt_set_matmul_variant(desc, variant.c_str()), OPRT_SUCCESS) << oprt_last_error_message();
    ASSERT_EQ(oprt_execute_matmul(desc, nullptr, 0, vo.data, va.data, vb.data, nullptr), OPRT_SUCCESS)
        << where << ": " << oprt_last_error_message();
    EXPECT_EQ(oprt_destroy_matmul_descriptor(desc), OPRT_SUCCESS);
    for (int64_t i = 0; i < out.rows; ++i)
        for (int64_t j = 0; j < out.cols; ++j) {
            double want = 0.0, scale = 0.0;
            for (int64_t p = 0; p < a.cols; ++p) {
                want += double(a.at(i, p)) * double(b.at(p, j));
                scale += std::fabs(double(a.at(i, p)) * double(b.at(p, j)));
            }
            const double tol = 1e-6 + 4.0 * 5.96e-8 * std::sqrt(double(a.cols) + 1.0) * scale + 1e-6 * std::fabs(want);
            ASSERT_NEAR(out.at(i, j), want, tol) << where << " at (" << i << ", " << j << ")";
        }
}

TEST(MatmulCpu, EveryVariantMatchesFloat64OnOddSizes) {
    std::mt19937 rng(7);
    // The blocked kernel's cases: one row of tiles (M <= 96), several; B in two bands of
    // columns (K x N over 2^21 floats); K too long for a tile's columns of B to be packed whole
    // (over 16384), with one row of tiles and with two; K = 0.
    const int64_t sizes[][3] = {{1, 1, 1},       {7, 33, 129},     {33, 127, 7},    {97, 300, 61},
                                {129, 255, 127}, {100, 4500, 600}, {13, 17000, 40}, {100, 17000, 40},
                                {5, 0, 7},       {100, 0, 7}};
    for (const std::string &variant : cpu_variants())
        for (const auto &s : sizes) {
            Matrix a = make(s[0], s[1], Layout::kRowMajor, rng, true);
            Matrix b = make(s[1], s[2], Layout::kRowMajor, rng, true);
            Matrix out = make(s[0], s[2], Layout::kRowMajor, rng, false);
            check(variant, a, b, out);
        }
}

TEST(MatmulCpu, EveryLayoutOfEveryOperand) {
    std::mt19937 rng(11);
    const Layout layouts[] = {Layout::kRowMajor, Layout::kColMajor, Layout::kPadded};
    for (const std::string &variant : cpu_variants())
        for (Layout la : {Layout::kRowMajor, Layout::kColMajor, Layout::kPadded, Layout::kBroadcastRows})
            for (Layout lb : layouts)
                for (Layout lo : layouts)
                    for (const int64_t m : {37, 101}) {  // one row of tiles, two
                        Matrix a = make(m, 45, la, rng, true);
                        Matrix b = make(45, 29, lb, rng, true);
                        Matrix out = make(m, 29, lo, rng, false);
                        check(variant, a, b, out);
                    }
}

TEST(MatmulCpu, KZeroWritesZeros) {
    BackendGuard cpu(OPRT_BACKEND_CPU);
    std::vector<float> out(12, std::nanf(""));
    const oprt_tensor_view_t vo = make_view(OPRT_DTYPE_F32, {3, 4}, {}, out.data());
    const oprt_tensor_view_t va = make_view(OPRT_DTYPE_F32, {3, 0}), vb = make_view(OPRT_DTYPE_F32, {0, 4});
    for (const std::string &variant : cpu_variants()) {
        oprt_matmul_descriptor_t desc = nullptr;
        ASSERT_EQ(oprt_create_matmul_descriptor(&desc, &vo, &va, &vb), OPRT_SUCCESS) << oprt_last_error_message();
        ASSERT_EQ(oprt_set_matmul_variant(desc, variant.c_str()), OPRT_SUCCESS);
        ASSERT_EQ(oprt_execute_matmul(desc, nullptr, 0, out.data(), nullptr, nullptr, nullptr), OPRT_SUCCESS)
            << oprt_last_error_message();
        EXPECT_EQ(oprt_destroy_matmul_descriptor(desc), OPRT_SUCCESS);
        for (float v : out) EXPECT_EQ(v, 0.0f) << variant;
        std::fill(out.begin(), out.end(), std::nanf(""));
    }
}

// Creates out = a @ b for these shapes; returns the status and the message in *message.
oprt_status_t create(const std::vector<int64_t> &out, const std::vector<int64_t> &a, const std::vector<int64_t> &b,
                     std::string *message, oprt_dtype_t b_dtype = OPRT_DTYPE_F32) {
    const oprt_tensor_view_t vo = make_view(OPRT_DTYPE_F32, out), va = make_view(OPRT_DTYPE_F32, a),
                             vb = make_view(b_dtype, b);
    oprt_matmul_descriptor_t desc = nullptr;
    const oprt_status_t s = oprt_create_matmul_descriptor(&desc, &vo, &va, &vb);
    *message = oprt_last_error_message();
    if (s == OPRT_SUCCESS) oprt_destroy_matmul_descriptor(desc);
    return s;
}

TEST(MatmulCpu, RefusedArgumentsNameTheOperandAndShapes) {
    BackendGuard cpu(OPRT_BACKEND_CPU);
    std::string msg;
    EXPECT_EQ(create({3, 2}, {3, 4}, {5, 2}, &msg), OPRT_ERR_INVALID_ARG);
    EXPECT_NE(msg.find("a of shape (3, 4) and b of shape (5, 2) do not multiply"), std::string::npos) << msg;
    EXPECT_EQ(create({3, 3}, {3, 4}, {4, 2}, &msg), OPRT_ERR_INVALID_ARG);
    EXPECT_NE(msg.find("out has shape (3, 3) but a (3, 4) @ b (4, 2) has shape (3, 2)"), std::string::npos) << msg;
    EXPECT_EQ(create({3, 2}, {3, 4}, {1, 4, 2}, &msg), OPRT_ERR_INVALID_ARG);
    EXPECT_NE(msg.find("b has shape (1, 4, 2) (3 dims)"), std::string::npos) << msg;
    EXPECT_EQ(create({4}, {3, 4}, {4, 2}, &msg), OPRT_ERR_INVALID_ARG);
    EXPECT_NE(msg.find("out has shape (4) (1 dims)"), std::string::npos) << msg;
    EXPECT_NE(create({3, 2}, {3, 4}, {4, 2}, &msg, OPRT_DTYPE_F16), OPRT_SUCCESS);
    EXPECT_NE(msg.find("b"), std::string::npos) << msg;

    // out overlapping an input is refused at execute.
    std::vector<float> buf(32, 0.0f), b(16, 1.0f);
    const oprt_tensor_view_t vo = make_view(OPRT_DTYPE_F32, {4, 4}, {8, 1}, buf.data());
    const oprt_tensor_view_t va = make_view(OPRT_DTYPE_F32, {4, 4}, {8, 1}, buf.data() + 2);
    const oprt_tensor_view_t vb = make_view(OPRT_DTYPE_F32, {4, 4}, {}, b.data());
    oprt_matmul_descriptor_t desc = nullptr;
    ASSERT_EQ(oprt_create_matmul_descriptor(&desc, &vo, &va, &vb), OPRT_SUCCESS) << oprt_last_error_message();
    EXPECT_EQ(oprt_execute_matmul(desc, nullptr, 0, vo.data, va.data, vb.data, nullptr), OPRT_ERR_INVALID_ARG);
    EXPECT_NE(std::string(oprt_last_error_message()).find("out overlaps a"), std::string::npos)
        << oprt_last_error_message();
    EXPECT_EQ(oprt_destroy_matmul_descriptor(desc), OPRT_SUCCESS);
}

}  // namespace
