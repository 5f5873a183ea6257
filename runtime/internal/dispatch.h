// The one place a call crosses from the backend-agnostic frontend into a
// backend. Each operator lists its backend entry points in a BackendTable;
// backends that are not compiled into this build are nullptr there.
#pragma once

#include <cstddef>

#include "operator_runtime/api.h"
#include "runtime/internal/error.h"

namespace oprt {

// The buffers of one execute call, already checked by the frontend.
struct ExecArgs {
    void *out = nullptr;
    const void *in0 = nullptr;
    const void *in1 = nullptr;
    void *workspace = nullptr;
    size_t workspace_size = 0;
    oprt_stream_t stream = nullptr;
};

template <typename Plan>
using BackendFn = oprt_status_t (*)(const Plan &plan, const ExecArgs &args);

// Optional per-backend planning at descriptor creation: picks the kernel for
// this shape and sets workspace_bytes. Pure host code; may be nullptr.
template <typename Plan>
using PlanFn = oprt_status_t (*)(Plan &plan);

// One step of a backend's kernel ladder (oprt_list_<op>_variants): a plan
// function that fills the plan like the plan hook but forces this step's kernel
// (plan.kernel, kernel_name, launch, workspace_bytes), or fails with
// OPRT_ERR_NOT_SUPPORTED saying why the step cannot run this plan. `run`, when
// set, replaces the backend's execute for this variant (the CPU ladders' steps,
// the NVIDIA elementwise ladder's "cute" step and the "student" variant of an
// exercise bring their own launch code); the NVIDIA ladders' other steps leave
// it nullptr: the backend's run switches on plan.kernel.
template <typename Plan>
struct Variant {
    const char *name;
    PlanFn<Plan> plan;
    BackendFn<Plan> run = nullptr;
};

// A backend's ladder, plain to fastest (the last step is the fastest).
template <typename Plan>
struct VariantList {
    const Variant<Plan> *items;
    int count;
};

template <typename Plan>
struct BackendEntry {
    BackendFn<Plan> execute;
    PlanFn<Plan> plan;
    // nullptr: the backend has no ladder; it lists one variant, "auto" (its plan's choice).
    // A ladder whose top step is named "auto" (the CPU ladders) lists it last.
    const VariantList<Plan> *ladder = nullptr;
};

template <typename Plan>
struct BackendTable {
    BackendEntry<Plan> cpu;
    BackendEntry<Plan> nvidia;
    BackendEntry<Plan> metax;
};

// Names an entry point of a GPU backend without referencing it when that
// backend is not built: the only backend #if an operator file needs.
#if defined(OPRT_WITH_NVIDIA)
#define OPRT_NVIDIA_ENTRY(fn) (&fn)
#else
#define OPRT_NVIDIA_ENTRY(fn) nullptr
#endif
#if defined(OPRT_WITH_METAX)
#define OPRT_METAX_ENTRY(fn) (&fn)
#else
#define OPRT_METAX_ENTRY(fn) nullptr
#endif

template <typename Plan>
const BackendEntry<Plan> *backend_entry(const BackendTable<Plan> &table, oprt_backend_t backend) {
    switch (backend) {
    case OPRT_BACKEND_CPU: return &table.cpu;
    case OPRT_BACKEND_NVIDIA: return &table.nvidia;
    case OPRT_BACKEND_METAX: return &table.metax;
    default: return nullptr;
    }
}

// The "student" variant of (op, backend), registered by an exercise's source
// file (scripts/camp.py exercise; student/<backend>/<op>_student.*) when one is
// compiled into this library; nullptr otherwise. Type-erased: the registering
// file and the operator agree on the Plan type.
const void *find_student_variant(const char *op, oprt_backend_t backend);
bool register_student_variant(const char *op, oprt_backend_t backend, const void *variant);

template <typename Plan>
const Variant<Plan> *student_variant(const char *op, oprt_backend_t backend) {
    return static_cast<const Variant<Plan> *>(find_student_variant(op, backend));
}

// At creation: lets the chosen backend refine the plan.
template <typename Plan>
oprt_status_t plan_for_backend(const char *op, oprt_backend_t backend,
                               const BackendTable<Plan> &table, Plan &plan) {
    const BackendEntry<Plan> *entry = backend_entry(table, backend);
    if (entry == nullptr || entry->execute == nullptr)
        return fail(OPRT_ERR_BACKEND_UNAVAILABLE, "%s: backend '%s' is not built into this library",
                    op, oprt_backend_string(backend));
    return entry->plan ? entry->plan(plan) : OPRT_SUCCESS;
}

// At execute: launches on the backend recorded in the descriptor.
template <typename Plan>
oprt_status_t dispatch(const char *op, oprt_backend_t backend, const BackendTable<Plan> &table,
                       const Plan &plan, const ExecArgs &args) {
    const BackendEntry<Plan> *entry = backend_entry(table, backend);
    if (entry == nullptr || entry->execute == nullptr)
        return fail(OPRT_ERR_BACKEND_UNAVAILABLE, "%s: backend '%s' is not built into this library",
                    op, oprt_backend_string(backend));
    return entry->execute(plan, args);
}

}  // namespace oprt
