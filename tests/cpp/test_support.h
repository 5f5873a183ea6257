// Shared helpers of the C++ tests: one table that drives every operator
// through the public C API, view builders, and a guard that restores the
// calling thread's backend.
#pragma once

#include <gtest/gtest.h>

#include <cstdint>
#include <cstring>
#include <ostream>
#include <string>
#include <vector>

#include "operator_runtime/operator_runtime.h"

namespace oprt_test {

// Every operator of ops/manifest.json, in its order: tests/cpp/op_table.inc is generated
// from the manifest by CMake (cmake/manifest.cmake) into the build tree.
enum class OpKind {
#define OPRT_TEST_OP(Camel, name, num_inputs, args, elementwise, reduces, matmul, create_args, \
                     execute_args)                                                              \
    k##Camel,
#include "tests/cpp/op_table.inc"
#undef OPRT_TEST_OP
};

// One operator's public lifecycle, type-erased so a test can loop over all
// of them. Views and pointers beyond num_inputs are ignored; axis only matters
// for an operator with an int64_t parameter (the one-axis ops) and negative_slope only
// for one with a float parameter (relu).
struct OpSpec {
    OpKind kind;
    const char *name;        // "copy": every message of this operator contains it
    const char *create_fn;   // "oprt_create_copy_descriptor"
    const char *execute_fn;  // "oprt_execute_copy"
    int num_inputs;
    const char *args[3];  // argument names as the header spells them: out first
    bool elementwise;     // exact in-place allowed, inputs broadcast to out
    bool reduces;         // out is in's shape with the axis removed (or kept as 1)
    bool matmul;          // out (M, N) = in0 (M, K) @ in1 (K, N): see matmul_views

    oprt_status_t (*create)(void **desc, const oprt_tensor_view_t *out,
                            const oprt_tensor_view_t *in0, const oprt_tensor_view_t *in1,
                            int64_t axis, float negative_slope);
    oprt_status_t (*workspace)(void *desc, size_t *size);
    oprt_status_t (*execute)(void *desc, void *workspace, size_t workspace_size, void *out,
                             const void *in0, const void *in1);
    oprt_status_t (*destroy)(void *desc);
    oprt_status_t (*kernel_name)(void *desc, const char **name);
};

// Calls the typed create; `desc` may be NULL (passed through as NULL) and its
// incoming value is what the typed out-pointer holds before the call.
#define OPRT_TEST_CREATE(T, CALL)            \
    [&]() -> oprt_status_t {                 \
        if (desc == nullptr) {               \
            T *d = nullptr;                  \
            return CALL;                     \
        }                                    \
        T typed = static_cast<T>(*desc);     \
        T *d = &typed;                       \
        const oprt_status_t s_ = CALL;       \
        *desc = typed;                       \
        return s_;                           \
    }()

#define OPRT_TEST_EXPAND(...) __VA_ARGS__

// One OpSpec per row of the generated table: the typed lifecycle calls of operator `name`.
// create_args name what the typed create takes: d (the typed descriptor pointer), o, i0, i1,
// axis (an int64_t parameter), scalar (a float parameter).
#define OPRT_TEST_OP(Camel, name, num_inputs, args, elementwise, reduces, matmul, create_args, \
                     execute_args)                                                         \
    {OpKind::k##Camel, #name, "oprt_create_" #name "_descriptor", "oprt_execute_" #name,    \
     num_inputs, {OPRT_TEST_EXPAND args}, elementwise, reduces, matmul,                      \
     [](void **desc, const oprt_tensor_view_t *o, const oprt_tensor_view_t *i0,              \
        const oprt_tensor_view_t *i1, int64_t axis, float scalar) {                          \
         (void)i1;                                                                           \
         (void)axis;                                                                         \
         (void)scalar;                                                                       \
         return OPRT_TEST_CREATE(oprt_##name##_descriptor_t,                                 \
                                 oprt_create_##name##_descriptor(OPRT_TEST_EXPAND create_args)); \
     },                                                                                      \
     [](void *d, size_t *s) {                                                                \
         return oprt_get_##name##_workspace_size(static_cast<oprt_##name##_descriptor_t>(d), s); \
     },                                                                                      \
     [](void *d, void *ws, size_t wss, void *o, const void *i0, const void *i1) {            \
         (void)i1;                                                                           \
         return oprt_execute_##name(static_cast<oprt_##name##_descriptor_t>(d), ws, wss, o,  \
                                    OPRT_TEST_EXPAND execute_args, nullptr);                 \
     },                                                                                      \
     [](void *d) {                                                                           \
         return oprt_destroy_##name##_descriptor(static_cast<oprt_##name##_descriptor_t>(d)); \
     },                                                                                      \
     [](void *d, const char **n) {                                                           \
         return oprt_get_##name##_kernel_name(static_cast<oprt_##name##_descriptor_t>(d), n); \
     }},

inline const std::vector<OpSpec> &all_ops() {
    static const std::vector<OpSpec> ops = {
#include "tests/cpp/op_table.inc"
    };
    return ops;
}

#undef OPRT_TEST_OP
#undef OPRT_TEST_EXPAND
#undef OPRT_TEST_CREATE

// Every operator's kind, in table order (for INSTANTIATE_TEST_SUITE_P over all operators).
inline std::vector<OpKind> all_kinds() {
    std::vector<OpKind> kinds;
    for (const OpSpec &op : all_ops()) kinds.push_back(op.kind);
    return kinds;
}

inline const OpSpec &op_spec(OpKind kind) {
    for (const OpSpec &op : all_ops())
        if (op.kind == kind) return op;
    std::abort();
}

// Readable names in test listings (ctest shows a parameter's printed value).
inline void PrintTo(OpKind kind, std::ostream *os) { *os << op_spec(kind).name; }

inline int64_t dtype_bytes(oprt_dtype_t dtype) { return dtype == OPRT_DTYPE_F32 ? 4 : 2; }

inline std::vector<int64_t> contiguous_strides(const std::vector<int64_t> &shape) {
    std::vector<int64_t> strides(shape.size());
    int64_t s = 1;
    for (size_t d = shape.size(); d-- > 0;) {
        strides[d] = s;
        s *= shape[d] > 0 ? shape[d] : 1;
    }
    return strides;
}

// A view with the given shape and strides (contiguous when strides is empty).
inline oprt_tensor_view_t make_view(oprt_dtype_t dtype, const std::vector<int64_t> &shape,
                                    std::vector<int64_t> strides = {}, void *data = nullptr) {
    if (strides.empty()) strides = contiguous_strides(shape);
    oprt_tensor_view_t v;
    std::memset(&v, 0, sizeof v);
    v.data = data;
    v.dtype = dtype;
    v.ndim = int32_t(shape.size());
    for (size_t d = 0; d < shape.size() && d < OPRT_MAX_DIMS; ++d) {
        v.shape[d] = shape[d];
        v.strides[d] = strides[d];
    }
    return v;
}

// The views a matmul-kind operator takes for a generic test's input `in` of shape (R, C):
// a = in (its layout kept when 2-D), b (C, 1) and out (R, 1), a matrix-vector product. None is larger than `in`, so
// every buffer sized for `in` holds them. A 1-D or 0-d `in` counts as (1, n).
struct MatmulViews {
    oprt_tensor_view_t out, a, b;
};
inline MatmulViews matmul_views(const oprt_tensor_view_t &in) {
    int64_t rows = 1, cols = 1;
    for (int d = 0; d + 1 < in.ndim; ++d) rows *= in.shape[d];
    if (in.ndim > 0) cols = in.shape[in.ndim - 1];
    MatmulViews v;
    v.a = in.ndim == 2 ? in : make_view(in.dtype, {rows, cols}, {}, in.data);
    v.b = make_view(in.dtype, {cols, 1});
    v.out = make_view(in.dtype, {rows, 1});
    return v;
}

// An enum holding a value outside its enumerators, stored the way a C caller
// (or ctypes) would pass it: the raw int bits.
template <typename E>
E raw_enum(int value) {
    static_assert(sizeof(E) == sizeof(int), "enum is not int-sized");
    E e;
    std::memcpy(&e, &value, sizeof e);
    return e;
}

// Sets the calling thread's backend for a scope and restores the previous one.
class BackendGuard {
public:
    explicit BackendGuard(oprt_backend_t backend) {
        EXPECT_EQ(oprt_get_backend(&saved_), OPRT_SUCCESS);
        EXPECT_EQ(oprt_set_backend(backend), OPRT_SUCCESS) << oprt_last_error_message();
    }
    ~BackendGuard() { oprt_set_backend(saved_); }
    BackendGuard(const BackendGuard &) = delete;
    BackendGuard &operator=(const BackendGuard &) = delete;

private:
    oprt_backend_t saved_ = OPRT_BACKEND_AUTO;
};

// Creates, queries the workspace, executes once and destroys right away.
// Returns the first failing status (with the message in *error).
inline oprt_status_t run_op(const OpSpec &op, const oprt_tensor_view_t &out,
                            const oprt_tensor_view_t *in0, const oprt_tensor_view_t *in1,
                            void *out_ptr, const void *in0_ptr, const void *in1_ptr, int64_t axis,
                            float negative_slope, std::string *error) {
    void *desc = nullptr;
    oprt_status_t s = op.create(&desc, &out, in0, in1, axis, negative_slope);
    if (s != OPRT_SUCCESS) {
        if (error) *error = std::string(op.create_fn) + ": " + oprt_last_error_message();
        return s;
    }
    size_t ws_size = 0;
    s = op.workspace(desc, &ws_size);
    if (s != OPRT_SUCCESS) {
        if (error) *error = std::string("workspace: ") + oprt_last_error_message();
        op.destroy(desc);
        return s;
    }
    std::vector<unsigned char> ws(ws_size);
    s = op.execute(desc, ws_size ? ws.data() : nullptr, ws_size, out_ptr, in0_ptr, in1_ptr);
    const std::string exec_error = s != OPRT_SUCCESS ? oprt_last_error_message() : "";
    const oprt_status_t ds = op.destroy(desc);
    if (s != OPRT_SUCCESS) {
        if (error) *error = std::string(op.execute_fn) + ": " + exec_error;
        return s;
    }
    if (ds != OPRT_SUCCESS && error) *error = std::string("destroy: ") + oprt_last_error_message();
    return ds;
}

}  // namespace oprt_test
