// relu: the public symbols. Validates once, plans, dispatches to a backend.
#include "operator_runtime/ops/relu.h"

#include <cmath>

#include "runtime/internal/frontend.h"
#include "ops/relu/relu_backends.h"

struct oprt_relu_descriptor : oprt::Descriptor<oprt::ElementwisePlan> {};

namespace {
using namespace oprt;

const BackendTable<ElementwisePlan> kBackends = {
    {&relu::cpu::run, &relu::cpu::plan},
    {OPRT_NVIDIA_ENTRY(relu::nvidia::run), OPRT_NVIDIA_ENTRY(relu::nvidia::plan), OPRT_NVIDIA_ENTRY(relu::nvidia::ladder)},
    {OPRT_METAX_ENTRY(relu::metax::run), OPRT_METAX_ENTRY(relu::metax::plan), OPRT_METAX_ENTRY(relu::metax::ladder)},
};
}  // namespace

extern "C" {

oprt_status_t oprt_create_relu_descriptor(oprt_relu_descriptor_t *desc,
                                          const oprt_tensor_view_t *out,
                                          const oprt_tensor_view_t *in, float negative_slope) {
    const char *op = "oprt_create_relu_descriptor";
    oprt_status_t s = check_desc_out(op, desc);
    if (s != OPRT_SUCCESS) return s;
    if (!std::isfinite(negative_slope))  // NaN, or inf (0 * inf would make relu(0) NaN)
        return fail(OPRT_ERR_INVALID_ARG, "%s: negative_slope = %g is not finite", op, double(negative_slope));
    const char *in_args[] = {"in"};
    const oprt_tensor_view_t *ins[] = {in};
    ElementwisePlan plan;
    ExecContract contract;
    if ((s = plan_elementwise(op, "out", out, in_args, ins, 1, &plan, &contract)) != OPRT_SUCCESS)
        return s;
    plan.scalar = negative_slope;
    contract.op = "oprt_execute_relu";
    return finish_create(op, kBackends, plan, contract, out->data, desc);
}

oprt_status_t oprt_get_relu_workspace_size(oprt_relu_descriptor_t desc, size_t *size) {
    return workspace_size("oprt_get_relu_workspace_size", desc, size);
}

oprt_status_t oprt_execute_relu(oprt_relu_descriptor_t desc, void *workspace,
                                size_t workspace_size, void *out, const void *in,
                                oprt_stream_t stream) {
    ExecArgs args;
    args.out = out;
    args.in0 = in;
    args.workspace = workspace;
    args.workspace_size = workspace_size;
    args.stream = stream;
    return execute("oprt_execute_relu", desc, kBackends, args);
}

oprt_status_t oprt_check_relu_execute(oprt_relu_descriptor_t desc, const void *out, const void *in) {
    return check_operands("oprt_check_relu_execute", desc, out, in, nullptr);
}

oprt_status_t oprt_get_relu_kernel_name(oprt_relu_descriptor_t desc, const char **name) {
    return kernel_name("oprt_get_relu_kernel_name", desc, name);
}

oprt_status_t oprt_list_relu_variants(oprt_backend_t backend, const char **names, int capacity, int *count) {
    return list_variants("relu", kBackends, backend, names, capacity, count);
}

oprt_status_t oprt_set_relu_variant(oprt_relu_descriptor_t desc, const char *name) {
    return set_variant("relu", desc, kBackends, name);
}

oprt_status_t oprt_destroy_relu_descriptor(oprt_relu_descriptor_t desc) {
    return destroy("oprt_destroy_relu_descriptor", desc);
}

}  // extern "C"
