// The lifecycle every operator shares: create (after the operator's own
// validation has built a plan), workspace query, execute, destroy. An
// operator file only validates its arguments and lists its backends.
#pragma once

#include <new>

#include "operator_runtime/detail/backend.h"
#include "operator_runtime/detail/dispatch.h"
#include "operator_runtime/detail/error.h"
#include "operator_runtime/detail/tensor.h"

namespace oprt {

template <typename Plan>
struct Descriptor {
    Plan plan;
    ExecContract contract;
};

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
    desc->contract = contract;
    desc->contract.backend = backend;
    DeviceScope device;  // plan for the device that holds the output
    device.enter_create(backend, data_hint);
    if ((s = plan_for_backend(op, backend, table, desc->plan)) != OPRT_SUCCESS) {
        delete desc;
        return s;
    }
    desc->contract.workspace_bytes = desc->plan.workspace_bytes;
    *out = desc;
    return OPRT_SUCCESS;
}

template <typename Desc>
oprt_status_t workspace_size(const char *op, const Desc *desc, size_t *size) {
    if (desc == nullptr) return fail(OPRT_ERR_INVALID_ARG, "%s: desc is NULL", op);
    if (size == nullptr) return fail(OPRT_ERR_INVALID_ARG, "%s: size (output pointer) is NULL", op);
    *size = desc->contract.workspace_bytes;
    return OPRT_SUCCESS;
}

// The kernel the backend's plan hook recorded ("" when it names none).
template <typename Desc>
oprt_status_t kernel_name(const char *op, const Desc *desc, const char **name) {
    if (desc == nullptr) return fail(OPRT_ERR_INVALID_ARG, "%s: desc is NULL", op);
    if (name == nullptr)
        return fail(OPRT_ERR_INVALID_ARG, "%s: name (output pointer) is NULL", op);
    *name = desc->plan.kernel_name != nullptr ? desc->plan.kernel_name : "";
    return OPRT_SUCCESS;
}

template <typename Desc, typename Plan>
oprt_status_t execute(const char *op, const Desc *desc, const BackendTable<Plan> &table,
                      const ExecArgs &args) {
    if (desc == nullptr) return fail(OPRT_ERR_INVALID_ARG, "%s: desc is NULL", op);
    oprt_status_t s = check_execute(desc->contract, args.workspace, args.workspace_size, args.out,
                                    args.in0, args.in1);
    if (s != OPRT_SUCCESS) return s;
    if (desc->contract.out.numel == 0) return OPRT_SUCCESS;  // nothing to write
    DeviceScope device;
    if ((s = device.enter_call(desc->contract.backend, desc->contract, args)) != OPRT_SUCCESS) return s;
    return dispatch(op, desc->contract.backend, table, desc->plan, args);
}

template <typename Desc>
oprt_status_t destroy(const char *op, Desc *desc) {
    if (desc == nullptr) return fail(OPRT_ERR_INVALID_ARG, "%s: desc is NULL", op);
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
