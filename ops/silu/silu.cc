// silu: the public symbols. Validates once, plans, dispatches to a backend.
#include "operator_runtime/ops/silu.h"

#include "runtime/internal/frontend.h"
#include "ops/silu/silu_backends.h"

struct oprt_silu_descriptor : oprt::Descriptor<oprt::ElementwisePlan> {};

namespace {
using namespace oprt;

const BackendTable<ElementwisePlan> kBackends = {
    {&silu::cpu::run, &silu::cpu::plan},
    {OPRT_NVIDIA_ENTRY(silu::nvidia::run), OPRT_NVIDIA_ENTRY(silu::nvidia::plan), OPRT_NVIDIA_ENTRY(silu::nvidia::ladder)},
    {OPRT_METAX_ENTRY(silu::metax::run), OPRT_METAX_ENTRY(silu::metax::plan), OPRT_METAX_ENTRY(silu::metax::ladder)},
};
}  // namespace

extern "C" {

oprt_status_t oprt_create_silu_descriptor(oprt_silu_descriptor_t *desc,
                                          const oprt_tensor_view_t *out,
                                          const oprt_tensor_view_t *in) {
    const char *op = "oprt_create_silu_descriptor";
    oprt_status_t s = check_desc_out(op, desc);
    if (s != OPRT_SUCCESS) return s;
    const char *in_args[] = {"in"};
    const oprt_tensor_view_t *ins[] = {in};
    ElementwisePlan plan;
    ExecContract contract;
    if ((s = plan_elementwise(op, "out", out, in_args, ins, 1, &plan, &contract)) != OPRT_SUCCESS)
        return s;
    contract.op = "oprt_execute_silu";
    return finish_create(op, kBackends, plan, contract, out->data, desc);
}

oprt_status_t oprt_get_silu_workspace_size(oprt_silu_descriptor_t desc, size_t *size) {
    return workspace_size("oprt_get_silu_workspace_size", desc, size);
}

oprt_status_t oprt_execute_silu(oprt_silu_descriptor_t desc, void *workspace,
                                size_t workspace_size, void *out, const void *in,
                                oprt_stream_t stream) {
    ExecArgs args;
    args.out = out;
    args.in0 = in;
    args.workspace = workspace;
    args.workspace_size = workspace_size;
    args.stream = stream;
    return execute("oprt_execute_silu", desc, kBackends, args);
}

oprt_status_t oprt_check_silu_execute(oprt_silu_descriptor_t desc, const void *out, const void *in) {
    return check_operands("oprt_check_silu_execute", desc, out, in, nullptr);
}

oprt_status_t oprt_get_silu_kernel_name(oprt_silu_descriptor_t desc, const char **name) {
    return kernel_name("oprt_get_silu_kernel_name", desc, name);
}

oprt_status_t oprt_destroy_silu_descriptor(oprt_silu_descriptor_t desc) {
    return destroy("oprt_destroy_silu_descriptor", desc);
}

oprt_status_t oprt_list_silu_variants(oprt_backend_t backend, const char **names, int capacity, int *count) {
    return list_variants("silu", kBackends, backend, names, capacity, count);
}

oprt_status_t oprt_set_silu_variant(oprt_silu_descriptor_t desc, const char *name) {
    return set_variant("silu", desc, kBackends, name);
}

}  // extern "C"
