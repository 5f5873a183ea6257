// libFuzzer target: the raw C API, every entry point of every operator.
// Tensor views are the fuzz bytes themselves (any dtype, ndim, shape and stride values, as a C caller could pass them),
// with raw axes, slopes, backends and enum values, through every operator's
// create, workspace query, execute (exactly sized buffers when the views are
// small) and destroy. Findings: a crash or sanitizer report, a NULL string
// from the *_string functions, a failure without a message naming the
// operator, a failed create that left *desc set, an accepted view the model
// says must be rejected, or a failing destroy. Also: the variants listing (any
// backend, capacity), set_variant with listed and fuzzed names, kernel names,
// the check-execute functions (they must agree with execute), a descriptor
// passed to another operator's functions, and every call on a destroyed one.
#include <memory>

#include "fuzz_support.h"

namespace {

oprt_tensor_view_t raw_view(FuzzedDataProvider &fdp) {
    oprt_tensor_view_t v;
    std::memset(&v, 0, sizeof v);
    const std::vector<uint8_t> bytes = fdp.ConsumeBytes<uint8_t>(sizeof v);
    if (!bytes.empty()) std::memcpy(&v, bytes.data(), bytes.size());
    v.data = nullptr;  // create never reads through it; execute gets its own pointers
    // Mostly small ndim and sizes, so that some views are valid and run.
    if (fdp.ConsumeBool()) {
        v.ndim = int32_t(uint32_t(v.ndim) % 5);
        for (int d = 0; d < OPRT_MAX_DIMS; ++d) {
            v.shape[d] = int64_t(uint64_t(v.shape[d]) % 6);
            v.strides[d] = int64_t(uint64_t(v.strides[d]) % 40);
        }
        fz::set_raw_dtype(v, int(uint32_t(fz::raw_dtype(v)) % 4));
    }
    return v;
}

}  // namespace


// Every operator's public functions, type-erased: the descriptor as void *.
struct ApiOp {
    const char *name;
    int num_inputs;
    oprt_status_t (*create)(void **desc, const oprt_tensor_view_t *const *v, int64_t axis, float slope);
    oprt_status_t (*workspace)(void *desc, size_t *size);
    oprt_status_t (*execute)(void *desc, void *ws, size_t ws_size, void *out, const void *a, const void *b);
    oprt_status_t (*check)(void *desc, const void *out, const void *a, const void *b);
    oprt_status_t (*kernel_name)(void *desc, const char **name);
    oprt_status_t (*list)(oprt_backend_t backend, const char **names, int capacity, int *count);
    oprt_status_t (*set_variant)(void *desc, const char *name);
    oprt_status_t (*destroy)(void *desc);
};

#define OPRT_FUZZ_OP(op, nin, CREATE, EXEC, CHECK)                                                           \
    ApiOp {                                                                                                   \
        #op, nin,                                                                                             \
            [](void **desc, const oprt_tensor_view_t *const *v, int64_t axis, float slope) {                  \
                (void)axis, (void)slope;                                                                      \
                oprt_##op##_descriptor_t *d = reinterpret_cast<oprt_##op##_descriptor_t *>(desc);             \
                return CREATE;                                                                                \
            },                                                                                                \
            [](void *d, size_t *size) { return oprt_get_##op##_workspace_size(static_cast<oprt_##op##_descriptor_t>(d), size); }, \
            [](void *d, void *ws, size_t wss, void *o, const void *a, const void *b) {                         \
                (void)b;                                                                                      \
                const oprt_##op##_descriptor_t desc = static_cast<oprt_##op##_descriptor_t>(d);                \
                return EXEC;                                                                                  \
            },                                                                                                \
            [](void *d, const void *o, const void *a, const void *b) {                                        \
                (void)b;                                                                                      \
                const oprt_##op##_descriptor_t desc = static_cast<oprt_##op##_descriptor_t>(d);                \
                return CHECK;                                                                                 \
            },                                                                                                \
            [](void *d, const char **n) { return oprt_get_##op##_kernel_name(static_cast<oprt_##op##_descriptor_t>(d), n); }, \
            &oprt_list_##op##_variants,                                                                       \
            [](void *d, const char *n) { return oprt_set_##op##_variant(static_cast<oprt_##op##_descriptor_t>(d), n); }, \
            [](void *d) { return oprt_destroy_##op##_descriptor(static_cast<oprt_##op##_descriptor_t>(d)); }  \
    }

const ApiOp kOps[] = {
    OPRT_FUZZ_OP(copy, 1, oprt_create_copy_descriptor(d, v[0], v[1]),
                 oprt_execute_copy(desc, ws, wss, o, a, nullptr), oprt_check_copy_execute(desc, o, a)),
    OPRT_FUZZ_OP(vector_add, 2, oprt_create_vector_add_descriptor(d, v[0], v[1], v[2]),
                 oprt_execute_vector_add(desc, ws, wss, o, a, b, nullptr), oprt_check_vector_add_execute(desc, o, a, b)),
    OPRT_FUZZ_OP(relu, 1, oprt_create_relu_descriptor(d, v[0], v[1], slope),
                 oprt_execute_relu(desc, ws, wss, o, a, nullptr), oprt_check_relu_execute(desc, o, a)),
    OPRT_FUZZ_OP(reduce_sum, 1, oprt_create_reduce_sum_descriptor(d, v[0], v[1], axis),
                 oprt_execute_reduce_sum(desc, ws, wss, o, a, nullptr), oprt_check_reduce_sum_execute(desc, o, a)),
    OPRT_FUZZ_OP(softmax, 1, oprt_create_softmax_descriptor(d, v[0], v[1], axis),
                 oprt_execute_softmax(desc, ws, wss, o, a, nullptr), oprt_check_softmax_execute(desc, o, a)),
    OPRT_FUZZ_OP(silu, 1, oprt_create_silu_descriptor(d, v[0], v[1]),
                 oprt_execute_silu(desc, ws, wss, o, a, nullptr), oprt_check_silu_execute(desc, o, a)),
};
constexpr int kNumOps = int(sizeof kOps / sizeof kOps[0]);

// A variant name: one a backend lists, "auto", or fuzz bytes.
std::string pick_variant_name(FuzzedDataProvider &fdp, const ApiOp &op) {
    const uint8_t b = fdp.ConsumeIntegral<uint8_t>();
    if (b < 64) return "auto";
    if (b < 192) {
        const char *names[16];
        int count = 0;
        if (op.list(OPRT_BACKEND_CPU, names, 16, &count) == OPRT_SUCCESS && count > 0)
            return names[b % std::min(count, 16)];
    }
    return fdp.ConsumeRandomLengthString(24);
}

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    FuzzedDataProvider fdp(data, size);
    fz::context().clear();

    // Enum arguments stay within what each C++ enum can hold (status 0..7, backend and
    // dtype 0..3): the library reads enum parameters as enums, and a value outside
    // that range is undefined behaviour in C++ (UBSan -fsanitize=enum; see README.md).
    const int raw = fdp.ConsumeIntegral<uint8_t>();
    FZ_CHECK(oprt_status_string(static_cast<oprt_status_t>(raw & 7)) != nullptr, "status string NULL");
    FZ_CHECK(oprt_backend_string(static_cast<oprt_backend_t>(raw & 3)) != nullptr, "backend string NULL");
    FZ_CHECK(oprt_dtype_string(static_cast<oprt_dtype_t>(raw & 3)) != nullptr, "dtype string NULL");
    FZ_CHECK(oprt_set_backend(static_cast<oprt_backend_t>(raw & 3)) == OPRT_SUCCESS, "oprt_set_backend(%d)", raw & 3);
    int available = -1;
    FZ_CHECK(oprt_backend_is_available(static_cast<oprt_backend_t>(raw & 3), &available) == OPRT_SUCCESS &&
                 (available == 0 || available == 1),
             "oprt_backend_is_available(%d)", raw & 3);
    oprt_set_backend(fdp.ConsumeBool() ? OPRT_BACKEND_AUTO : OPRT_BACKEND_CPU);

    const int op_index = fdp.ConsumeIntegralInRange<int>(0, kNumOps - 1);
    const ApiOp &op = kOps[op_index];
    const char *name = op.name;
    const int num_inputs = op.num_inputs;

    {  // The variants listing: any backend value an enum holds, any capacity.
        const oprt_backend_t backend = static_cast<oprt_backend_t>(raw >> 6);
        const int capacity = fdp.ConsumeIntegralInRange<int>(-2, 6);
        const char *names[6] = {};
        int count = -1;
        const bool null_names = fdp.ConsumeIntegral<uint8_t>() == 255;
        const oprt_status_t s = op.list(backend, null_names ? nullptr : names, std::max(capacity, 0) == 0 ? capacity
                                                                                    : std::min(capacity, 6), &count);
        fz::note("list_%s_variants(%d, capacity %d) -> %s\n", name, int(backend), capacity, oprt_status_string(s));
        if (s == OPRT_SUCCESS) {
            FZ_CHECK(count >= 1, "a listing of %d variants", count);
            for (int i = 0; i < std::min(count, capacity); ++i) FZ_CHECK(names[i] != nullptr, "NULL variant name");
        } else {
            FZ_CHECK(s == OPRT_ERR_INVALID_ARG || s == OPRT_ERR_BACKEND_UNAVAILABLE, "listing: status %d", int(s));
            FZ_CHECK(std::strstr(oprt_last_error_message(), name) != nullptr, "listing message: %s",
                     oprt_last_error_message());
        }
    }

    oprt_tensor_view_t views[3];
    bool is_null[3];
    for (int k = 0; k <= num_inputs; ++k) {
        views[k] = raw_view(fdp);
        is_null[k] = fdp.ConsumeIntegral<uint8_t>() == 255;
    }
    const int64_t axis = fdp.ConsumeBool() ? fdp.ConsumeIntegralInRange<int64_t>(-9, 8) : fdp.ConsumeIntegral<int64_t>();
    const float slope = fdp.ConsumeFloatingPoint<float>();
    const oprt_tensor_view_t *p[3];
    for (int k = 0; k < 3; ++k) p[k] = k <= num_inputs && !is_null[k] ? &views[k] : nullptr;

    fz::note("%s axis %lld slope %g\n", name, (long long)axis, double(slope));
    for (int k = 0; k <= num_inputs; ++k) {
        fz::note("  view %d%s: dtype %d ndim %d shape/stride", k, is_null[k] ? " NULL" : "", fz::raw_dtype(views[k]),
                 int(views[k].ndim));
        for (int d = 0; d < std::clamp(int(views[k].ndim), 0, OPRT_MAX_DIMS); ++d)
            fz::note(" %lld/%lld", (long long)views[k].shape[d], (long long)views[k].strides[d]);
        fz::note("\n");
    }

    void *desc = reinterpret_cast<void *>(uintptr_t(1));
    oprt_status_t s = op.create(&desc, p, axis, slope);
    fz::note("  create -> %s %s\n", oprt_status_string(s), oprt_last_error_message());
    if (s != OPRT_SUCCESS) {
        fz::check_failure(s, name);
        FZ_CHECK(desc == nullptr, "a failed create left *desc = %p", desc);
        return 0;
    }
    for (int k = 0; k <= num_inputs; ++k) {
        fz::View v;
        v.v = views[k];
        v.is_null = is_null[k];
        const char *defect = fz::view_defect(v);
        FZ_CHECK(defect == nullptr, "create accepted view %d: %s", k, defect);
    }
    FZ_CHECK(!(op_index == 2 && !std::isfinite(slope)), "relu accepted slope %g", double(slope));

    const char *kernel = nullptr;
    FZ_CHECK(op.kernel_name(desc, &kernel) == OPRT_SUCCESS && kernel != nullptr, "kernel name: %s",
             oprt_last_error_message());
    if (fdp.ConsumeBool()) {  // another variant, or a name that is none
        const std::string variant = pick_variant_name(fdp, op);
        s = op.set_variant(desc, variant.c_str());
        fz::note("  set_variant('%s') -> %s %s\n", variant.c_str(), oprt_status_string(s), oprt_last_error_message());
        if (s != OPRT_SUCCESS) {
            FZ_CHECK(s == OPRT_ERR_INVALID_ARG || s == OPRT_ERR_NOT_SUPPORTED, "set_variant: status %d", int(s));
            FZ_CHECK(std::strstr(oprt_last_error_message(), name) != nullptr, "set_variant message: %s",
                     oprt_last_error_message());
        }
        FZ_CHECK(op.kernel_name(desc, &kernel) == OPRT_SUCCESS && kernel != nullptr, "kernel name after set_variant");
    }

    size_t required = 0;
    s = op.workspace(desc, &required);
    FZ_CHECK(s == OPRT_SUCCESS && required < (size_t(1) << 30), "workspace query: %s", oprt_last_error_message());

    // Execute on exactly sized blocks when every view is small, else on NULL data. Small in
    // memory and in work: an input broadcast by 0 strides spans few elements but may be read
    // billions of times.
    bool small = true;
    std::unique_ptr<fz::Block> blocks[3];
    void *ptrs[3] = {nullptr, nullptr, nullptr};
    for (int k = 0; k <= num_inputs; ++k) {
        const fz::Extent e = fz::extent_of(views[k]);
        small = small && e.elems <= 4096 && e.numel <= (int64_t(1) << 20);
    }
    const bool with_data = small && fdp.ConsumeBool();
    if (with_data)
        for (int k = 0; k <= num_inputs; ++k) {
            const int64_t bytes = fz::extent_of(views[k]).elems * fz::esize(fz::raw_dtype(views[k]));
            blocks[k].reset(new fz::Block(size_t(bytes)));
            std::memset(blocks[k]->base, fdp.ConsumeIntegral<uint8_t>(), size_t(bytes));
            ptrs[k] = blocks[k]->base;
        }
    // The operand checks alone agree with execute's.
    const oprt_status_t checked = op.check(desc, ptrs[0], ptrs[1], ptrs[2]);
    if (checked != OPRT_SUCCESS) fz::check_failure(checked, name);
    fz::Block ws(required);
    s = op.execute(desc, ws.base, required, ptrs[0], ptrs[1], ptrs[2]);
    fz::note("  execute%s -> %s %s\n", with_data ? "" : " (NULL data)", oprt_status_string(s), oprt_last_error_message());
    FZ_CHECK((s == OPRT_SUCCESS) == (checked == OPRT_SUCCESS), "check_execute said %s, execute %s",
             oprt_status_string(checked), oprt_status_string(s));
    if (s != OPRT_SUCCESS) fz::check_failure(s, name);
    else if (!with_data) FZ_CHECK(fz::extent_of(views[0]).numel == 0, "execute with NULL out data succeeded");

    // A descriptor given to another operator's functions is refused, and stays live.
    const ApiOp &other = kOps[(op_index + 1 + fdp.ConsumeIntegralInRange<int>(0, kNumOps - 2)) % kNumOps];
    size_t other_size = 0;
    fz::check_failure(other.workspace(desc, &other_size), other.name);
    fz::check_failure(other.execute(desc, ws.base, required, ptrs[0], ptrs[1], ptrs[2]), other.name);
    fz::check_failure(other.destroy(desc), other.name);

    FZ_CHECK(op.destroy(desc) == OPRT_SUCCESS, "destroy failed: %s", oprt_last_error_message());
    // Destroyed: every call on it is refused (double destroy included).
    if (fdp.ConsumeBool()) {
        const char *after = nullptr;
        fz::check_failure(op.destroy(desc), name);
        fz::check_failure(op.workspace(desc, &required), name);
        fz::check_failure(op.kernel_name(desc, &after), name);
        fz::check_failure(op.check(desc, ptrs[0], ptrs[1], ptrs[2]), name);
        fz::check_failure(op.execute(desc, ws.base, required, ptrs[0], ptrs[1], ptrs[2]), name);
        fz::check_failure(op.set_variant(desc, "auto"), name);
    }
    return 0;
}
