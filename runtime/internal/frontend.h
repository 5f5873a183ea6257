// The lifecycle every operator shares: create (after the operator's own
// validation has built a plan), workspace query, execute, destroy. An
// operator file only validates its arguments and lists its backends.
#pragma once

#include <cstdint>
#include <cstdio>
#include <cstring>
#include <new>

#include "runtime/internal/backend.h"
#include "runtime/internal/dispatch.h"
#include "runtime/internal/error.h"
#include "runtime/internal/handles.h"
#include "runtime/internal/tensor.h"

namespace oprt {

template <typename Plan>
struct Descriptor {
    Plan plan;
    ExecContract contract;
    Plan validated;                 // the frontend's plan before any backend refined it
    BackendFn<Plan> run = nullptr;  // set by a variant with its own launch code (Variant::run)
    int plan_device = -1;           // the GPU the plan was made for (-1: CPU, or unknown)
};

// A handle given to the caller (runtime/internal/handles.h) and back.
template <typename Desc>
Desc *to_handle(uint64_t handle) {
    return reinterpret_cast<Desc *>(static_cast<uintptr_t>(handle));
}

// The descriptor behind a caller's handle of this operator, or nullptr after
// recording why (NULL, destroyed, not from this library, another operator's).
template <typename Desc>
Desc *live(const char *fn, const Desc *handle) {
    HandleMiss miss;
    void *object = handle_lookup(reinterpret_cast<uintptr_t>(handle), &kind_tag<Desc>, &miss);
    if (object == nullptr) handle_failure(fn, miss);
    return static_cast<Desc *>(object);
}

// Resolves the backend, lets it refine the plan, and allocates the descriptor.
template <typename Desc, typename Plan>
oprt_status_t finish_create(const char *op, const BackendTable<Plan> &table, const Plan &plan,
                            const ExecContract &contract, const void *data_hint, Desc **out) {
    oprt_backend_t backend;
    oprt_status_t s = resolve_backend(op, data_hint, &backend);
    if (s != OPRT_SUCCESS) return s;
    Desc *desc = new (std::nothrow) Desc{};
    if (desc == nullptr) return fail(OPRT_ERR_RUNTIME, "%s: out of host memory for the descriptor", op);
    desc->plan = plan;
    desc->validated = plan;
    desc->contract = contract;
    desc->contract.backend = backend;
    DeviceScope device;  // plan for the device that holds the output
    device.enter_create(backend, data_hint);
    desc->plan_device = device.current();
    if ((s = plan_for_backend(op, backend, table, desc->plan)) != OPRT_SUCCESS) {
        delete desc;
        return s;
    }
    desc->contract.workspace_bytes = desc->plan.workspace_bytes;
    const uint64_t handle = handle_insert(&kind_tag<Desc>, op, desc);
    if (handle == 0) {
        delete desc;
        return fail(OPRT_ERR_RUNTIME, "%s: out of descriptor handles (too many live descriptors)", op);
    }
    *out = to_handle<Desc>(handle);
    return OPRT_SUCCESS;
}

template <typename Desc>
oprt_status_t workspace_size(const char *op, const Desc *handle, size_t *size) {
    const Desc *desc = live(op, handle);
    if (desc == nullptr) return OPRT_ERR_INVALID_ARG;
    if (size == nullptr) return fail(OPRT_ERR_INVALID_ARG, "%s: size (output pointer) is NULL", op);
    *size = desc->contract.workspace_bytes;
    return OPRT_SUCCESS;
}

// The kernel the backend's plan hook recorded ("" when it names none).
template <typename Desc>
oprt_status_t kernel_name(const char *op, const Desc *handle, const char **name) {
    const Desc *desc = live(op, handle);
    if (desc == nullptr) return OPRT_ERR_INVALID_ARG;
    if (name == nullptr)
        return fail(OPRT_ERR_INVALID_ARG, "%s: name (output pointer) is NULL", op);
    *name = desc->plan.kernel_name != nullptr ? desc->plan.kernel_name : "";
    return OPRT_SUCCESS;
}

template <typename Desc, typename Plan>
oprt_status_t execute(const char *op, const Desc *handle, const BackendTable<Plan> &table,
                      const ExecArgs &args) {
    const Desc *desc = live(op, handle);
    if (desc == nullptr) return OPRT_ERR_INVALID_ARG;
    oprt_status_t s = check_execute(desc->contract, args.workspace, args.workspace_size, args.out,
                                    args.in0, args.in1);
    if (s != OPRT_SUCCESS) return s;
    if (desc->contract.out.numel == 0) return OPRT_SUCCESS;  // nothing to write
    DeviceScope device;
    if ((s = device.enter_call(desc->contract.backend, desc->contract, args)) != OPRT_SUCCESS) return s;
    if (desc->run != nullptr) return desc->run(desc->plan, args);
    return dispatch(op, desc->contract.backend, table, desc->plan, args);
}

// oprt_check_<op>_execute: the operand checks of execute() alone, for a caller that
// runs its own kernel on the descriptor's arrays (the Python backends); messages
// name the operator's execute function, as execute() does.
template <typename Desc>
oprt_status_t check_operands(const char *op, const Desc *handle, const void *out, const void *in0,
                             const void *in1) {
    const Desc *desc = live(op, handle);
    if (desc == nullptr) return OPRT_ERR_INVALID_ARG;
    return check_execute_operands(desc->contract, out, in0, in1);
}

// ---- Kernel variants (oprt_list_<op>_variants, oprt_set_<op>_variant) --------------
// A backend's variants: the "student" variant of an exercise when one is built
// (first: the learner's step), then its ladder plain to fastest, or "auto"
// alone for a backend without a ladder (its plan's choice is its one kernel).

template <typename Plan>
struct VariantView {
    const Variant<Plan> *student = nullptr;
    const VariantList<Plan> *ladder = nullptr;
    int count() const { return (student ? 1 : 0) + (ladder ? ladder->count : 1); }
    const char *name(int i) const {
        if (student) {
            if (i == 0) return student->name;
            --i;
        }
        return ladder ? ladder->items[i].name : "auto";
    }
    const Variant<Plan> *find(const char *n) const {
        if (student && std::strcmp(student->name, n) == 0) return student;
        for (int i = 0; ladder && i < ladder->count; ++i)
            if (std::strcmp(ladder->items[i].name, n) == 0) return &ladder->items[i];
        return nullptr;
    }
};

template <typename Plan>
VariantView<Plan> variants_of(const char *op_name, oprt_backend_t backend, const BackendEntry<Plan> &entry) {
    return {student_variant<Plan>(op_name, backend), entry.ladder};
}

// `op_name` is the operator's short name ("softmax"); messages name the C function.
template <typename Plan>
oprt_status_t list_variants(const char *op_name, const BackendTable<Plan> &table, const oprt_backend_t &backend,
                            const char **names, int capacity, int *count) {
    char fn[96];
    std::snprintf(fn, sizeof fn, "oprt_list_%s_variants", op_name);
    if (count == nullptr) return fail(OPRT_ERR_INVALID_ARG, "%s: count (output pointer) is NULL", fn);
    *count = 0;
    if (capacity < 0) return fail(OPRT_ERR_INVALID_ARG, "%s: capacity = %d is negative", fn, capacity);
    if (names == nullptr && capacity > 0)
        return fail(OPRT_ERR_INVALID_ARG, "%s: names is NULL with capacity = %d (pass capacity 0 to ask the count)",
                    fn, capacity);
    const int backend_value = enum_value(backend);
    if (!backend_is_valid(backend_value))  // the code oprt_set_backend gives for it
        return fail(OPRT_ERR_INVALID_ARG, "%s: backend = %d is not a backend (auto=0, nvidia=1, metax=2, cpu=3)",
                    fn, backend_value);
    const BackendEntry<Plan> *entry = backend_entry(table, backend);
    if (backend == OPRT_BACKEND_AUTO)
        return fail(OPRT_ERR_INVALID_ARG, "%s: backend 'auto' names no backend; ask for cpu, nvidia or metax", fn);
    if (entry == nullptr || entry->execute == nullptr)
        return fail(OPRT_ERR_BACKEND_UNAVAILABLE, "%s: backend '%s' is not built into this library", fn,
                    oprt_backend_string(backend));
    const VariantView<Plan> v = variants_of(op_name, backend, *entry);
    for (int i = 0; i < v.count() && i < capacity; ++i) names[i] = v.name(i);
    *count = v.count();
    return OPRT_SUCCESS;
}

// Replaces the plan's kernel choice by the named variant ("auto": the plan's
// own choice again). Workspace size and kernel name follow the new plan.
template <typename Desc, typename Plan>
oprt_status_t set_variant(const char *op_name, Desc *handle, const BackendTable<Plan> &table, const char *name) {
    char fn[96];
    std::snprintf(fn, sizeof fn, "oprt_set_%s_variant", op_name);
    Desc *desc = live(fn, handle);
    if (desc == nullptr) return OPRT_ERR_INVALID_ARG;
    if (name == nullptr) return fail(OPRT_ERR_INVALID_ARG, "%s: name is NULL (\"auto\": the plan's choice)", fn);
    const oprt_backend_t backend = desc->contract.backend;
    const BackendEntry<Plan> *entry = backend_entry(table, backend);
    if (entry == nullptr || entry->execute == nullptr)
        return fail(OPRT_ERR_BACKEND_UNAVAILABLE, "%s: backend '%s' is not built into this library", fn,
                    oprt_backend_string(backend));
    const VariantView<Plan> v = variants_of(op_name, backend, *entry);
    DeviceScope device;  // re-plan for the device the descriptor was planned for
    device.enter_device(backend, desc->plan_device);
    Plan plan = desc->validated;
    oprt_status_t s = OPRT_SUCCESS;
    BackendFn<Plan> run = nullptr;
    if (std::strcmp(name, "auto") == 0) {
        if (entry->plan) s = entry->plan(plan);
    } else {
        const Variant<Plan> *variant = v.find(name);
        if (variant == nullptr) {
            char valid[512] = "auto";
            size_t used = std::strlen(valid);
            for (int i = 0; i < v.count() && used + 1 < sizeof valid; ++i) {
                if (std::strcmp(v.name(i), "auto") == 0) continue;
                used += size_t(std::snprintf(valid + used, sizeof valid - used, ", %s", v.name(i)));
            }
            return fail(OPRT_ERR_INVALID_ARG, "%s: '%s' is not a %s variant of the %s backend (valid: %s)", fn,
                        name, op_name, oprt_backend_string(backend), valid);
        }
        s = variant->plan(plan);
        run = variant->run;
    }
    if (s != OPRT_SUCCESS) {  // the plan function's message, prefixed with the call and the variant
        char why[512];
        std::snprintf(why, sizeof why, "%s", oprt_last_error_message());
        return fail(s, "%s: variant '%s' on %s: %s", fn, name, oprt_backend_string(backend), why);
    }
    desc->plan = plan;
    desc->contract.workspace_bytes = plan.workspace_bytes;
    desc->run = run;
    return OPRT_SUCCESS;
}

template <typename Desc>
oprt_status_t destroy(const char *op, Desc *handle) {
    HandleMiss miss;
    Desc *desc = static_cast<Desc *>(
        handle_remove(reinterpret_cast<uintptr_t>(handle), &kind_tag<Desc>, &miss));
    if (desc == nullptr) return handle_failure(op, miss);
    delete desc;
    return OPRT_SUCCESS;
}

// Checks the output pointer of a create call.
template <typename Desc>
oprt_status_t check_desc_out(const char *op, Desc **desc) {
    if (desc == nullptr) return fail(OPRT_ERR_INVALID_ARG, "%s: desc (output pointer) is NULL", op);
    *desc = nullptr;
    return OPRT_SUCCESS;
}

}  // namespace oprt
