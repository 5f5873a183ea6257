// The CuTe kernels (launch_cute_copy / _vector_add / _relu) against float64
// references, at odd sizes (tails of every length class) in f32, f16 and bf16,
// with NaN-poisoned outputs and a guard past the end that must stay untouched;
// plus the layouts they refuse (OPRT_ERR_NOT_SUPPORTED). Built only with CuTe
// (camp_cute_tests, a standalone executable: the kernels are internal to camp_ops).
// Skips, printing the reason, without a GPU.
#include <cmath>
#include <limits>
#include <string>

#include "../nvidia_test_support.h"
#include "runtime/gpu/cute_launch.h"
#include "runtime/internal/plan.h"

namespace {

using oprt::ElementwisePlan;
using oprt::ExecArgs;

enum class Op { kCopy, kAdd, kRelu };

const oprt_dtype_t kDtypes[] = {OPRT_DTYPE_F32, OPRT_DTYPE_F16, OPRT_DTYPE_BF16};
// 1 element, under one 128-bit access, one thread's worth, one tile +- 1 (a tile is
// 128 threads x 4 accesses x 4 or 8 elements), many tiles with odd tails.
const int64_t kSizes[] = {1, 3, 9, 2047, 2048, 2049, 4097, 65536 * 3 + 5, (1 << 20) + 17};

ElementwisePlan contiguous_plan(oprt_dtype_t dtype, int64_t n, int inputs, float scalar) {
    ElementwisePlan p;
    p.dtype = dtype;
    p.num_inputs = inputs;
    p.numel = n;
    p.ndim = 1;
    p.shape[0] = n;
    for (int i = 0; i <= inputs; ++i) p.strides[i][0] = 1;
    p.contiguous = true;
    p.scalar = scalar;
    return p;
}

oprt_status_t launch(Op op, const ElementwisePlan &p, const ExecArgs &a) {
    switch (op) {
    case Op::kCopy: return oprt::cute_kernels::launch_cute_copy(p, a);
    case Op::kAdd: return oprt::cute_kernels::launch_cute_vector_add(p, a);
    case Op::kRelu: return oprt::cute_kernels::launch_cute_relu(p, a);
    }
    return OPRT_ERR_INVALID_ARG;
}

// Sprinkles NaN, +-inf and -0 into a host tensor (and uploads it).
void add_specials(nvt::Tensor &t) {
    const float specials[] = {std::numeric_limits<float>::quiet_NaN(),
                              std::numeric_limits<float>::infinity(),
                              -std::numeric_limits<float>::infinity(), -0.0f};
    for (int64_t i = 0; i < t.numel(); i += 37) t.set(i, specials[(i / 37) % 4]);
    nvt::upload(t);
}

double relu_ref(double x, double slope) {
    if (x > 0) return x;
    if (slope == 0) return std::isnan(x) ? x : 0.0;
    return slope * x;
}

void check(Op op, oprt_dtype_t dtype, int64_t n, float slope) {
    const char *name = op == Op::kCopy ? "copy" : op == Op::kAdd ? "vector_add" : "relu";
    const std::string what = std::string(name) + " " + nvt::dtype_name(dtype) +
                             " n=" + std::to_string(n) +
                             (op == Op::kRelu ? " slope=" + std::to_string(slope) : "");
    SCOPED_TRACE(what);
    constexpr int64_t kGuard = 16;
    nvt::Tensor a, b, out;
    nvt::make_tensor(a, dtype, {n}, {}, 0, nvt::Fill::kUniform, 11u + uint32_t(n));
    nvt::make_tensor(b, dtype, {n}, {}, 0, nvt::Fill::kUniform, 23u + uint32_t(n));
    if (op != Op::kAdd) add_specials(a);
    nvt::make_tensor(out, dtype, {n + kGuard}, {}, 0, nvt::Fill::kPoison);  // NaN everywhere
    const int inputs = op == Op::kAdd ? 2 : 1;
    ExecArgs args;
    args.out = out.data();
    args.in0 = a.data();
    args.in1 = op == Op::kAdd ? b.data() : nullptr;
    NVT_OPRT_OK(launch(op, contiguous_plan(dtype, n, inputs, slope), args));
    nvt::download(out);
    const nvt::Tol exact{0, 0}, rounded = nvt::rounding_tol(dtype);
    int failures = 0;
    for (int64_t i = 0; i < n + kGuard; ++i) {
        const double got = out.get(i);
        if (i >= n) {  // the guard past the end: still the poison bytes
            if (!std::isnan(got) && ++failures <= 5) ADD_FAILURE() << "wrote past the end at " << i;
            continue;
        }
        const double x = a.get(i);
        double want;
        nvt::Tol tol = exact;
        if (op == Op::kCopy) {
            want = x;
        } else if (op == Op::kAdd) {
            want = x + double(b.get(i));
            tol = rounded;
        } else {
            want = relu_ref(x, slope);
            if (slope != 0) tol = rounded;
        }
        if (!nvt::close(got, want, tol.rtol, tol.atol) && ++failures <= 5)
            ADD_FAILURE() << "element " << i << " = " << got << ", want " << want;
    }
    EXPECT_EQ(failures, 0);
}

TEST(CuteKernels, MatchTheReferenceAtOddSizes) {
    NVT_SKIP_WITHOUT_CUDA();
    for (oprt_dtype_t dtype : kDtypes)
        for (int64_t n : kSizes) {
            check(Op::kCopy, dtype, n, 0.0f);
            check(Op::kAdd, dtype, n, 0.0f);
            check(Op::kRelu, dtype, n, 0.0f);
            check(Op::kRelu, dtype, n, 0.1f);
        }
}

TEST(CuteKernels, RefuseLayoutsTheyDoNotHandle) {
    NVT_SKIP_WITHOUT_CUDA();
    nvt::Tensor a, out;
    nvt::make_tensor(a, OPRT_DTYPE_F32, {1025});
    nvt::make_tensor(out, OPRT_DTYPE_F32, {1025});
    ExecArgs args;
    args.out = out.data();
    args.in0 = a.data();
    args.in1 = a.data();
    ElementwisePlan strided = contiguous_plan(OPRT_DTYPE_F32, 512, 1, 0.0f);
    strided.contiguous = false;
    strided.strides[1][0] = 2;
    EXPECT_EQ(oprt::cute_kernels::launch_cute_copy(strided, args), OPRT_ERR_NOT_SUPPORTED);
    EXPECT_NE(std::string(oprt_last_error_message()).find("contiguous"), std::string::npos);
    ExecArgs misaligned = args;  // one f32 past a 16-byte boundary
    misaligned.in0 = static_cast<const float *>(args.in0) + 1;
    const ElementwisePlan p = contiguous_plan(OPRT_DTYPE_F32, 1024, 1, 0.0f);
    EXPECT_EQ(oprt::cute_kernels::launch_cute_relu(p, misaligned), OPRT_ERR_NOT_SUPPORTED);
    EXPECT_NE(std::string(oprt_last_error_message()).find("16-byte"), std::string::npos);
    const ElementwisePlan p2 = contiguous_plan(OPRT_DTYPE_F32, 1024, 2, 0.0f);
    EXPECT_EQ(oprt::cute_kernels::launch_cute_vector_add(p2, misaligned), OPRT_ERR_NOT_SUPPORTED);
}

}  // namespace
