// libFuzzer target: the raw C API. Tensor views are the fuzz bytes themselves
// (any dtype, ndim, shape and stride values, as a C caller could pass them),
// with raw axes, slopes, backends and enum values, through every operator's
// create, workspace query, execute (exactly sized buffers when the views are
// small) and destroy. Findings: a crash or sanitizer report, a NULL string
// from the *_string functions, a failure without a message naming the
// operator, a failed create that left *desc set, an accepted view the model
// says must be rejected, or a failing destroy.
#include <memory>

#include "fuzz_support.h"

namespace {

const char *const kOpNames[] = {"copy", "vector_add", "relu", "reduce_sum", "softmax"};

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

    const int op = fdp.ConsumeIntegralInRange<int>(0, 4);
    const char *name = kOpNames[op];
    const int num_inputs = op == 1 ? 2 : 1;
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
    oprt_status_t s;
    switch (op) {
    case 0: s = oprt_create_copy_descriptor(reinterpret_cast<oprt_copy_descriptor_t *>(&desc), p[0], p[1]); break;
    case 1: s = oprt_create_vector_add_descriptor(reinterpret_cast<oprt_vector_add_descriptor_t *>(&desc), p[0], p[1], p[2]); break;
    case 2: s = oprt_create_relu_descriptor(reinterpret_cast<oprt_relu_descriptor_t *>(&desc), p[0], p[1], slope); break;
    case 3: s = oprt_create_reduce_sum_descriptor(reinterpret_cast<oprt_reduce_sum_descriptor_t *>(&desc), p[0], p[1], axis); break;
    default: s = oprt_create_softmax_descriptor(reinterpret_cast<oprt_softmax_descriptor_t *>(&desc), p[0], p[1], axis); break;
    }
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

    size_t required = 0;
    switch (op) {
    case 0: s = oprt_get_copy_workspace_size(static_cast<oprt_copy_descriptor_t>(desc), &required); break;
    case 1: s = oprt_get_vector_add_workspace_size(static_cast<oprt_vector_add_descriptor_t>(desc), &required); break;
    case 2: s = oprt_get_relu_workspace_size(static_cast<oprt_relu_descriptor_t>(desc), &required); break;
    case 3: s = oprt_get_reduce_sum_workspace_size(static_cast<oprt_reduce_sum_descriptor_t>(desc), &required); break;
    default: s = oprt_get_softmax_workspace_size(static_cast<oprt_softmax_descriptor_t>(desc), &required); break;
    }
    FZ_CHECK(s == OPRT_SUCCESS && required < (size_t(1) << 30), "workspace query: %s", oprt_last_error_message());

    // Execute on exactly sized blocks when every view is small, else on NULL data.
    bool small = true;
    std::unique_ptr<fz::Block> blocks[3];
    void *ptrs[3] = {nullptr, nullptr, nullptr};
    for (int k = 0; k <= num_inputs; ++k) small = small && fz::extent_of(views[k]).elems <= 4096;
    const bool with_data = small && fdp.ConsumeBool();
    if (with_data)
        for (int k = 0; k <= num_inputs; ++k) {
            const int64_t bytes = fz::extent_of(views[k]).elems * fz::esize(fz::raw_dtype(views[k]));
            blocks[k].reset(new fz::Block(size_t(bytes)));
            std::memset(blocks[k]->base, fdp.ConsumeIntegral<uint8_t>(), size_t(bytes));
            ptrs[k] = blocks[k]->base;
        }
    fz::Block ws(required);
    switch (op) {
    case 0: s = oprt_execute_copy(static_cast<oprt_copy_descriptor_t>(desc), ws.base, required, ptrs[0], ptrs[1], nullptr); break;
    case 1: s = oprt_execute_vector_add(static_cast<oprt_vector_add_descriptor_t>(desc), ws.base, required, ptrs[0], ptrs[1], ptrs[2], nullptr); break;
    case 2: s = oprt_execute_relu(static_cast<oprt_relu_descriptor_t>(desc), ws.base, required, ptrs[0], ptrs[1], nullptr); break;
    case 3: s = oprt_execute_reduce_sum(static_cast<oprt_reduce_sum_descriptor_t>(desc), ws.base, required, ptrs[0], ptrs[1], nullptr); break;
    default: s = oprt_execute_softmax(static_cast<oprt_softmax_descriptor_t>(desc), ws.base, required, ptrs[0], ptrs[1], nullptr); break;
    }
    fz::note("  execute%s -> %s %s\n", with_data ? "" : " (NULL data)", oprt_status_string(s), oprt_last_error_message());
    if (s != OPRT_SUCCESS) fz::check_failure(s, name);
    else if (!with_data) FZ_CHECK(fz::extent_of(views[0]).numel == 0, "execute with NULL out data succeeded");

    switch (op) {
    case 0: s = oprt_destroy_copy_descriptor(static_cast<oprt_copy_descriptor_t>(desc)); break;
    case 1: s = oprt_destroy_vector_add_descriptor(static_cast<oprt_vector_add_descriptor_t>(desc)); break;
    case 2: s = oprt_destroy_relu_descriptor(static_cast<oprt_relu_descriptor_t>(desc)); break;
    case 3: s = oprt_destroy_reduce_sum_descriptor(static_cast<oprt_reduce_sum_descriptor_t>(desc)); break;
    default: s = oprt_destroy_softmax_descriptor(static_cast<oprt_softmax_descriptor_t>(desc)); break;
    }
    FZ_CHECK(s == OPRT_SUCCESS, "destroy failed: %s", oprt_last_error_message());
    return 0;
}
