// The one place a call crosses from the backend-agnostic frontend into a
// backend. Each operator lists its backend entry points in a BackendTable;
// backends that are not compiled into this build are nullptr there.
#pragma once

#include <cstddef>

#include "operator_runtime/api.h"
#include "operator_runtime/detail/error.h"

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

template <typename Plan>
struct BackendEntry {
    BackendFn<Plan> execute;
    PlanFn<Plan> plan;
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
