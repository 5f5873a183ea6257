// Runs one operator case on the nvidia backend and checks it against a
// float64 host reference: inputs random (or small integers, whose f32 sums
// are exact), output poisoned with NaN bytes first, storage outside the
// output checked untouched. Shared by the op tests and the graph test.
#pragma once

#include <algorithm>
#include <cmath>
#include <string>
#include <vector>

#include "nvidia_test_support.h"

namespace nvt {

struct Spec {
    std::vector<int64_t> shape;
    std::vector<int64_t> strides;  // empty: contiguous
    int64_t offset = 0;            // elements before element 0 (misalignment)
};

// While one is alive, every check_* call below also asserts that its
// descriptor's plan picked the kernel `name` (oprt_get_<op>_kernel_name): the
// tests on each side of a plan threshold prove which side they are on.
class ExpectKernel {
public:
    explicit ExpectKernel(const char *name) : prev_(current()) { current() = name; }
    ~ExpectKernel() { current() = prev_; }
    ExpectKernel(const ExpectKernel &) = delete;
    ExpectKernel &operator=(const ExpectKernel &) = delete;
    static const char *&current() {
        static const char *name = nullptr;
        return name;
    }
    static void check(oprt_status_t status, const char *got, const std::string &what) {
        if (current() == nullptr) return;
        ASSERT_EQ(status, OPRT_SUCCESS) << what << ": kernel name query failed";
        EXPECT_STREQ(got, current()) << what << ": the plan picked another kernel";
    }

private:
    const char *prev_;
};

// While one is alive, every check_* call below runs its descriptor on the
// kernel variant `name` (oprt_set_<op>_variant, before the workspace query).
// A variant that cannot run the case (OPRT_ERR_NOT_SUPPORTED) ends the case;
// declined() counts them, so a test can insist on the cases a variant must run.
class UseVariant {
public:
    explicit UseVariant(const char *name) : prev_(current()) { current() = name; }
    ~UseVariant() { current() = prev_; }
    UseVariant(const UseVariant &) = delete;
    UseVariant &operator=(const UseVariant &) = delete;
    static const char *&current() {
        static const char *name = nullptr;
        return name;
    }
    static int &declined() {
        static int n = 0;
        return n;
    }
    // True when the case goes on with the variant set.
    static bool apply(oprt_status_t s, const std::string &what) {
        if (s == OPRT_ERR_NOT_SUPPORTED) {
            ++declined();
            EXPECT_NE(std::string(oprt_last_error_message()).find(current()), std::string::npos)
                << what << ": a NOT_SUPPORTED message names the variant: " << oprt_last_error_message();
            return false;
        }
        EXPECT_EQ(s, OPRT_SUCCESS) << what << ": set variant " << current() << ": " << oprt_last_error_message();
        return s == OPRT_SUCCESS;
    }

private:
    const char *prev_;
};

enum class Ew { kCopy, kAdd, kRelu };

inline const char *ew_name(Ew op) {
    return op == Ew::kCopy ? "copy" : (op == Ew::kAdd ? "vector_add" : "relu");
}

// Element offset of input `t` for out multi-index `idx` (numpy broadcasting).
inline int64_t broadcast_offset(const Tensor &t, const std::vector<int64_t> &idx) {
    int64_t off = t.offset;
    const int lead = int(idx.size()) - t.ndim();
    for (int d = 0; d < t.ndim(); ++d)
        if (t.shape[d] != 1) off += idx[d + lead] * t.strides[d];
    return off;
}

inline std::vector<int64_t> unravel(int64_t linear, const std::vector<int64_t> &shape) {
    std::vector<int64_t> idx(shape.size());
    for (int d = int(shape.size()) - 1; d >= 0; --d) {
        idx[d] = linear % shape[d];
        linear /= shape[d];
    }
    return idx;
}

inline oprt_status_t create_ew(Ew op, void **desc, const oprt_tensor_view_t *o, const oprt_tensor_view_t *a,
                               const oprt_tensor_view_t *b, float slope) {
    switch (op) {
    case Ew::kCopy: return oprt_create_copy_descriptor(reinterpret_cast<oprt_copy_descriptor_t *>(desc), o, a);
    case Ew::kAdd:
        return oprt_create_vector_add_descriptor(reinterpret_cast<oprt_vector_add_descriptor_t *>(desc), o, a, b);
    case Ew::kRelu:
        return oprt_create_relu_descriptor(reinterpret_cast<oprt_relu_descriptor_t *>(desc), o, a, slope);
    }
    return OPRT_ERR_INVALID_ARG;
}
inline oprt_status_t execute_ew(Ew op, void *desc, void *out, const void *a, const void *b, cudaStream_t s) {
    switch (op) {
    case Ew::kCopy: return oprt_execute_copy(static_cast<oprt_copy_descriptor_t>(desc), nullptr, 0, out, a, s);
    case Ew::kAdd:
        return oprt_execute_vector_add(static_cast<oprt_vector_add_descriptor_t>(desc), nullptr, 0, out, a, b, s);
    case Ew::kRelu: return oprt_execute_relu(static_cast<oprt_relu_descriptor_t>(desc), nullptr, 0, out, a, s);
    }
    return OPRT_ERR_INVALID_ARG;
}
inline oprt_status_t kernel_name_ew(Ew op, void *desc, const char **name) {
    switch (op) {
    case Ew::kCopy: return oprt_get_copy_kernel_name(static_cast<oprt_copy_descriptor_t>(desc), name);
    case Ew::kAdd: return oprt_get_vector_add_kernel_name(static_cast<oprt_vector_add_descriptor_t>(desc), name);
    case Ew::kRelu: return oprt_get_relu_kernel_name(static_cast<oprt_relu_descriptor_t>(desc), name);
    }
    return OPRT_ERR_INVALID_ARG;
}
inline oprt_status_t set_variant_ew(Ew op, void *desc, const char *name) {
    switch (op) {
    case Ew::kCopy: return oprt_set_copy_variant(static_cast<oprt_copy_descriptor_t>(desc), name);
    case Ew::kAdd: return oprt_set_vector_add_variant(static_cast<oprt_vector_add_descriptor_t>(desc), name);
    case Ew::kRelu: return oprt_set_relu_variant(static_cast<oprt_relu_descriptor_t>(desc), name);
    }
    return OPRT_ERR_INVALID_ARG;
}

inline oprt_status_t destroy_ew(Ew op, void *desc) {
    switch (op) {
    case Ew::kCopy: return oprt_destroy_copy_descriptor(static_cast<oprt_copy_descriptor_t>(desc));
    case Ew::kAdd: return oprt_destroy_vector_add_descriptor(static_cast<oprt_vector_add_descriptor_t>(desc));
    case Ew::kRelu: return oprt_destroy_relu_descriptor(static_cast<oprt_relu_descriptor_t>(desc));
    }
    return OPRT_ERR_INVALID_ARG;
}

inline double ew_reference(Ew op, double a, double b, float slope) {
    switch (op) {
    case Ew::kCopy: return a;
    case Ew::kAdd: return a + b;
    case Ew::kRelu: return a > 0 ? a : double(slope) * a;
    }
    return 0;
}

// One elementwise case. in_place: out is `a` itself (out_s must equal a_s).
inline void check_elementwise(Ew op, oprt_dtype_t dt, const Spec &out_s, const Spec &a_s, const Spec &b_s = {},
                              bool in_place = false, float slope = 0.125f, cudaStream_t stream = nullptr) {
    const std::string what = std::string(ew_name(op)) + " " + dtype_name(dt) + " out" + shape_str(out_s.shape) +
                             " a" + shape_str(a_s.shape) + (op == Ew::kAdd ? " b" + shape_str(b_s.shape) : "") +
                             (in_place ? " in-place" : "");
    SCOPED_TRACE(what);
    Tensor a, b, out_own;
    make_tensor(a, dt, a_s.shape, a_s.strides, a_s.offset, Fill::kUniform, 11);
    if (op == Ew::kAdd) make_tensor(b, dt, b_s.shape, b_s.strides, b_s.offset, Fill::kUniform, 12);
    const std::vector<unsigned char> a_host = a.host;  // inputs before an in-place run
    Tensor &out = in_place ? a : out_own;
    if (!in_place) make_tensor(out_own, dt, out_s.shape, out_s.strides, out_s.offset, Fill::kPoison);
    if (::testing::Test::HasFatalFailure()) return;

    const oprt_tensor_view_t ov = out.view(), av = a.view(), bv = op == Ew::kAdd ? b.view() : a.view();
    void *desc = nullptr;
    NVT_OPRT_OK(create_ew(op, &desc, &ov, &av, &bv, slope));
    if (UseVariant::current() && !UseVariant::apply(set_variant_ew(op, desc, UseVariant::current()), what)) {
        destroy_ew(op, desc);
        return;
    }
    const char *kernel = nullptr;
    const oprt_status_t named = kernel_name_ew(op, desc, &kernel);  // before reading `kernel`
    ExpectKernel::check(named, kernel, what);
    NVT_OPRT_OK(execute_ew(op, desc, out.data(), a.data(), op == Ew::kAdd ? b.data() : nullptr, stream));
    NVT_OPRT_OK(destroy_ew(op, desc));  // execute needs nothing after it returns
    download(out);

    Tensor a_ref;  // a's values as they were before the run
    a_ref.dtype = dt;
    a_ref.shape = a.shape;
    a_ref.strides = a.strides;
    a_ref.offset = a.offset;
    a_ref.host = a_host;
    const Tol exact{0.0, 0.0};
    const Tol rounded = rounding_tol(dt);
    if (in_place) {  // no poison in an in-place output: check the values only
        for (int64_t i = 0; i < out.numel(); ++i) {
            const auto idx = unravel(i, out.shape);
            const double want = ew_reference(op, a_ref.get(broadcast_offset(a_ref, idx)), 0, slope);
            const double got = out.get(out.linear_to_offset(i));
            ASSERT_TRUE(close(got, want, rounded.rtol, rounded.atol)) << what << " element " << i;
        }
        return;
    }
    expect_output(
        out,
        [&](int64_t i) {
            const auto idx = unravel(i, out.shape);
            const double x = a_ref.get(broadcast_offset(a_ref, idx));
            const double y = op == Ew::kAdd ? b.get(broadcast_offset(b, idx)) : 0.0;
            return ew_reference(op, x, y, slope);
        },
        [&](int64_t) { return op == Ew::kCopy ? exact : rounded; }, what);
}

// ---- One-axis ops ----------------------------------------------------------------

// Calls fn(slice, in_offsets, out_offsets) for every slice along `axis` of
// `in` (row-major over the other dims); out offsets follow out's strides for
// the same multi-index (the axis index is 0 for a reduced output).
inline void for_each_slice(const Tensor &in, const Tensor &out, int axis, bool reduce,
                           const std::function<void(int64_t, const std::vector<int64_t> &,
                                                    const std::vector<int64_t> &)> &fn) {
    const int nd = in.ndim();
    std::vector<int64_t> other;
    for (int d = 0; d < nd; ++d)
        if (d != axis) other.push_back(in.shape[d]);
    int64_t slices = 1;
    for (int64_t s : other) slices *= s;
    const int64_t L = nd == 0 ? 1 : in.shape[axis];
    std::vector<int64_t> ioffs(static_cast<size_t>(L)), ooffs(static_cast<size_t>(reduce ? 1 : L));
    for (int64_t s = 0; s < slices; ++s) {
        const auto oidx = unravel(s, other);
        int64_t ibase = in.offset, obase = out.offset;
        int j = 0;
        // out's dims: in's dims minus the axis (removed) or with it (kept or softmax).
        const bool out_has_axis = out.ndim() == nd;
        int od = 0;
        for (int d = 0; d < nd; ++d) {
            if (d == axis) {
                if (out_has_axis) ++od;
                continue;
            }
            ibase += oidx[j] * in.strides[d];
            obase += oidx[j] * out.strides[od];
            ++j;
            ++od;
        }
        for (int64_t k = 0; k < L; ++k) ioffs[size_t(k)] = ibase + (nd == 0 ? 0 : k * in.strides[axis]);
        if (reduce) {
            ooffs[0] = obase;
        } else {
            for (int64_t k = 0; k < L; ++k) ooffs[size_t(k)] = obase + (nd == 0 ? 0 : k * out.strides[axis]);
        }
        fn(s, ioffs, ooffs);
    }
}

// Checks storage outside the output's elements still holds the poison.
inline void expect_untouched_gaps(const Tensor &out, const std::vector<char> &is_elem, const std::string &what) {
    for (size_t e = 0; e < is_elem.size(); ++e) {
        if (is_elem[e]) continue;
        for (size_t b = 0; b < out.esize(); ++b)
            if (out.host[e * out.esize() + b] != 0xFF) {
                ADD_FAILURE() << what << ": storage element " << e << " outside the output was written";
                return;
            }
    }
}

// reduce_sum of `in_s` over `axis`; keepdims keeps the axis as size 1.
// out_strides (optional) lays out the output with gaps.
inline void check_reduce_sum(oprt_dtype_t dt, const Spec &in_s, int axis, bool keepdims = false,
                             Fill fill = Fill::kIntegers, std::vector<int64_t> out_strides = {},
                             int64_t out_offset = 0, cudaStream_t stream = nullptr) {
    const int nd = int(in_s.shape.size());
    const int ax = nd == 0 ? 0 : (axis < 0 ? axis + nd : axis);
    std::vector<int64_t> out_shape;
    for (int d = 0; d < nd; ++d) {
        if (d != ax) out_shape.push_back(in_s.shape[d]);
        else if (keepdims) out_shape.push_back(1);
    }
    const std::string what = std::string("reduce_sum ") + dtype_name(dt) + " in" + shape_str(in_s.shape) +
                             " axis " + std::to_string(axis) + (keepdims ? " keepdims" : "") +
                             (in_s.strides.empty() ? "" : " strided") +
                             (in_s.offset ? " offset " + std::to_string(in_s.offset) : "");
    SCOPED_TRACE(what);
    Tensor in, out;
    make_tensor(in, dt, in_s.shape, in_s.strides, in_s.offset, fill, 21, 1.0f);
    make_tensor(out, dt, out_shape, out_strides, out_offset, Fill::kPoison);
    if (::testing::Test::HasFatalFailure()) return;
    const oprt_tensor_view_t ov = out.view(), iv = in.view();
    oprt_reduce_sum_descriptor_t desc = nullptr;
    NVT_OPRT_OK(oprt_create_reduce_sum_descriptor(&desc, &ov, &iv, axis));
    if (UseVariant::current() && !UseVariant::apply(oprt_set_reduce_sum_variant(desc, UseVariant::current()), what)) {
        oprt_destroy_reduce_sum_descriptor(desc);
        return;
    }
    const char *kernel = nullptr;
    const oprt_status_t named = oprt_get_reduce_sum_kernel_name(desc, &kernel);  // before reading `kernel`
    ExpectKernel::check(named, kernel, what);
    size_t ws_bytes = 0;
    NVT_OPRT_OK(oprt_get_reduce_sum_workspace_size(desc, &ws_bytes));
    DeviceBuffer ws(ws_bytes);
    // Garbage in the workspace must not matter (no memset is needed).
    if (ws_bytes > 0) NVT_CUDA_OK(cudaMemsetAsync(ws.get(), 0x7F, ws_bytes, stream));  // ordered before the run
    NVT_OPRT_OK(oprt_execute_reduce_sum(desc, ws_bytes ? ws.get() : nullptr, ws_bytes, out.data(), in.data(), stream));
    NVT_OPRT_OK(oprt_destroy_reduce_sum_descriptor(desc));
    download(out);

    const Tol rt = rounding_tol(dt);
    std::vector<char> is_elem(size_t(out.storage_elems()), 0);
    int failures = 0;
    for_each_slice(in, out, ax, true, [&](int64_t s, const std::vector<int64_t> &io, const std::vector<int64_t> &oo) {
        double sum = 0, abs_sum = 0;
        for (int64_t off : io) {
            const double x = in.get(off);
            sum += x;
            abs_sum += std::fabs(x);
        }
        is_elem[size_t(oo[0])] = 1;
        // Integer inputs: f32 accumulation is exact, only the output rounds.
        // Random inputs: allow f32 accumulation error proportional to sum |x|.
        const double atol = fill == Fill::kIntegers ? 0.0 : 1e-6 * abs_sum * std::max(1.0, std::log2(double(io.size())));
        const double got = out.get(oo[0]);
        if (!close(got, sum, rt.rtol, atol + rt.atol) && ++failures <= 5)
            ADD_FAILURE() << what << ": output " << s << " = " << got << ", want " << sum;
    });
    if (failures > 5) ADD_FAILURE() << what << ": " << failures << " failures";
    expect_untouched_gaps(out, is_elem, what);
}

inline Tol softmax_tol(oprt_dtype_t dt) {
    switch (dt) {
    case OPRT_DTYPE_F32: return {1e-5, 1e-12};
    case OPRT_DTYPE_F16: return {2e-3, 1e-7};
    case OPRT_DTYPE_BF16: return {8e-3, 1e-12};
    }
    return {0, 0};
}

// Special rows: slice 0 all -inf (NaN out), slice 1 one NaN (all NaN),
// slice 2 one +inf (NaN), slice 3 some -inf among finite values.
inline void inject_specials(Tensor &in, int axis) {
    Tensor dummy_out;
    dummy_out.shape = in.shape;
    dummy_out.strides = in.strides;
    dummy_out.dtype = in.dtype;
    const float inf = std::numeric_limits<float>::infinity();
    for_each_slice(in, dummy_out, axis, false, [&](int64_t s, const std::vector<int64_t> &io, const std::vector<int64_t> &) {
        const size_t L = io.size();
        if (s == 0)
            for (int64_t off : io) in.set(off, -inf);
        if (s == 1) in.set(io[L / 2], std::nanf(""));
        if (s == 2) in.set(io[L - 1], inf);
        if (s == 3)
            for (size_t k = 0; k < L; k += 3) in.set(io[k], -inf);
        if (s == 4) {  // the first half -inf but one NaN: a part of the row with no finite value
            for (size_t k = 0; k < L / 2; ++k) in.set(io[k], -inf);
            in.set(io[L / 4], std::nanf(""));
        }
        if (s == 5)  // -inf but the middle half: a split row's first block sees no finite value, ends included
            for (size_t k = 0; k < L; ++k)
                if (k < L / 4 || k >= L - L / 4) in.set(io[k], -inf);
    });
    upload(in);
}

inline void check_softmax(oprt_dtype_t dt, const Spec &in_s, int axis, bool specials = false,
                          std::vector<int64_t> out_strides = {}, int64_t out_offset = 0,
                          cudaStream_t stream = nullptr, float range = 6.0f) {
    const int nd = int(in_s.shape.size());
    const int ax = nd == 0 ? 0 : (axis < 0 ? axis + nd : axis);
    const std::string what = std::string("softmax ") + dtype_name(dt) + " in" + shape_str(in_s.shape) + " axis " +
                             std::to_string(axis) + (in_s.strides.empty() ? "" : " strided") +
                             (out_strides.empty() ? "" : " strided-out") +
                             (in_s.offset ? " offset " + std::to_string(in_s.offset) : "") +
                             (specials ? " specials" : "");
    SCOPED_TRACE(what);
    Tensor in, out;
    make_tensor(in, dt, in_s.shape, in_s.strides, in_s.offset, Fill::kUniform, 31, range);
    if (specials) inject_specials(in, ax);
    make_tensor(out, dt, in_s.shape, out_strides, out_offset, Fill::kPoison);
    if (::testing::Test::HasFatalFailure()) return;
    const oprt_tensor_view_t ov = out.view(), iv = in.view();
    oprt_softmax_descriptor_t desc = nullptr;
    NVT_OPRT_OK(oprt_create_softmax_descriptor(&desc, &ov, &iv, axis));
    if (UseVariant::current() && !UseVariant::apply(oprt_set_softmax_variant(desc, UseVariant::current()), what)) {
        oprt_destroy_softmax_descriptor(desc);
        return;
    }
    const char *kernel = nullptr;
    const oprt_status_t named = oprt_get_softmax_kernel_name(desc, &kernel);  // before reading `kernel`
    ExpectKernel::check(named, kernel, what);
    size_t ws_bytes = 0;
    NVT_OPRT_OK(oprt_get_softmax_workspace_size(desc, &ws_bytes));
    DeviceBuffer ws(ws_bytes);
    if (ws_bytes > 0) NVT_CUDA_OK(cudaMemsetAsync(ws.get(), 0x7F, ws_bytes, stream));  // ordered before the run
    NVT_OPRT_OK(oprt_execute_softmax(desc, ws_bytes ? ws.get() : nullptr, ws_bytes, out.data(), in.data(), stream));
    NVT_OPRT_OK(oprt_destroy_softmax_descriptor(desc));
    download(out);

    const Tol t = softmax_tol(dt);
    std::vector<char> is_elem(size_t(out.storage_elems()), 0);
    int failures = 0;
    std::vector<double> e;
    for_each_slice(in, out, ax, false, [&](int64_t s, const std::vector<int64_t> &io, const std::vector<int64_t> &oo) {
        const size_t L = io.size();
        // PyTorch's definition in float64: max ignoring NaN, exp(x - max), sum, divide.
        double m = -std::numeric_limits<double>::infinity();
        for (int64_t off : io) {
            const double x = in.get(off);
            if (x > m) m = x;
        }
        e.resize(L);
        double sum = 0;
        for (size_t k = 0; k < L; ++k) {
            e[k] = std::exp(double(in.get(io[k])) - m);
            sum += e[k];
        }
        for (size_t k = 0; k < L; ++k) {
            is_elem[size_t(oo[k])] = 1;
            const double want = e[k] / sum;
            const double got = out.get(oo[k]);
            if (!close(got, want, t.rtol, t.atol) && ++failures <= 5)
                ADD_FAILURE() << what << ": slice " << s << " element " << k << " = " << got << ", want " << want;
        }
    });
    if (failures > 5) ADD_FAILURE() << what << ": " << failures << " failures";
    expect_untouched_gaps(out, is_elem, what);
}

// out = a @ b against a float64 sum: the output's rounding plus the f32
// accumulation (4 sqrt(K) roundings of the sum of |a_ip b_pj|).
inline void check_matmul(oprt_dtype_t dt, const Spec &a_s, const Spec &b_s, std::vector<int64_t> out_strides = {},
                         int64_t out_offset = 0) {
    const int64_t m = a_s.shape[0], k = a_s.shape[1], n = b_s.shape[1];
    const std::string what = std::string("matmul ") + dtype_name(dt) + " a" + shape_str(a_s.shape) +
                             (a_s.strides.empty() ? "" : " strided") + " b" + shape_str(b_s.shape) +
                             (b_s.strides.empty() ? "" : " strided") + (out_strides.empty() ? "" : " strided-out") +
                             (a_s.offset || out_offset ? " offset" : "");
    SCOPED_TRACE(what);
    Tensor a, b, out;
    make_tensor(a, dt, a_s.shape, a_s.strides, a_s.offset, Fill::kUniform, 41, 1.0f);
    make_tensor(b, dt, b_s.shape, b_s.strides, b_s.offset, Fill::kUniform, 43, 1.0f);
    make_tensor(out, dt, {m, n}, out_strides, out_offset, Fill::kPoison);
    if (::testing::Test::HasFatalFailure()) return;
    const oprt_tensor_view_t ov = out.view(), av = a.view(), bv = b.view();
    oprt_matmul_descriptor_t desc = nullptr;
    NVT_OPRT_OK(oprt_create_matmul_descriptor(&desc, &ov, &av, &bv));
    if (UseVariant::current() && !UseVariant::apply(oprt_set_matmul_variant(desc, UseVariant::current()), what)) {
        oprt_destroy_matmul_descriptor(desc);
        return;
    }
    const char *kernel = nullptr;
    const oprt_status_t named = oprt_get_matmul_kernel_name(desc, &kernel);
    ExpectKernel::check(named, kernel, what);
    size_t ws_bytes = 0;
    NVT_OPRT_OK(oprt_get_matmul_workspace_size(desc, &ws_bytes));
    DeviceBuffer ws(ws_bytes);
    NVT_OPRT_OK(oprt_execute_matmul(desc, ws_bytes ? ws.get() : nullptr, ws_bytes, out.data(), a.data(), b.data(), nullptr));
    NVT_OPRT_OK(oprt_destroy_matmul_descriptor(desc));
    download(out);
    const auto a_at = [&](int64_t i, int64_t p) { return double(a.get(a.offset + i * a.strides[0] + p * a.strides[1])); };
    const auto b_at = [&](int64_t p, int64_t j) { return double(b.get(b.offset + p * b.strides[0] + j * b.strides[1])); };
    std::vector<double> want(size_t(m * n)), scale(size_t(m * n));
    for (int64_t i = 0; i < m; ++i)
        for (int64_t j = 0; j < n; ++j) {
            double s = 0, abs_s = 0;
            for (int64_t p = 0; p < k; ++p) {
                s += a_at(i, p) * b_at(p, j);
                abs_s += std::fabs(a_at(i, p) * b_at(p, j));
            }
            want[size_t(i * n + j)] = s;
            scale[size_t(i * n + j)] = abs_s;
        }
    const Tol r = rounding_tol(dt);
    expect_output(
        out, [&](int64_t i) { return want[size_t(i)]; },
        [&](int64_t i) { return Tol{r.rtol, r.atol + 4.0 * 0x1p-24 * std::sqrt(double(k) + 1) * scale[size_t(i)]}; },
        what);
}

inline const std::vector<oprt_dtype_t> &all_dtypes() {
    static const std::vector<oprt_dtype_t> d = {OPRT_DTYPE_F32, OPRT_DTYPE_F16, OPRT_DTYPE_BF16};
    return d;
}

}  // namespace nvt
