// softmax: the public symbols. Validates once, plans, dispatches to a backend.
#include "operator_runtime/ops/softmax.h"

#include "runtime/internal/frontend.h"
#include "ops/softmax/softmax_backends.h"

struct oprt_softmax_descriptor : oprt::Descriptor<oprt::AxisPlan> {};

namespace {
using namespace oprt;

const BackendTable<AxisPlan> kBackends = {
    {&softmax::cpu::run, &softmax::cpu::plan, &softmax::cpu::ladder},
    {OPRT_NVIDIA_ENTRY(softmax::nvidia::run), OPRT_NVIDIA_ENTRY(softmax::nvidia::plan), OPRT_NVIDIA_ENTRY(softmax::nvidia::ladder)},
    {OPRT_METAX_ENTRY(softmax::metax::run), OPRT_METAX_ENTRY(softmax::metax::plan), OPRT_METAX_ENTRY(softmax::metax::ladder)},
};
}  // namespace

extern "C" {

oprt_status_t oprt_create_softmax_descriptor(oprt_softmax_descriptor_t *desc,
                                          const oprt_tensor_view_t *out,
                                          const oprt_tensor_view_t *in, int64_t axis) {
    const char *op = "oprt_create_softmax_descriptor";
    oprt_status_t s = check_desc_out(op, desc);
    if (s != OPRT_SUCCESS) return s;
    AxisPlan plan;
    ExecContract contract;
    if ((s = plan_axis(op, out, in, axis, /*reduce=*/false, &plan, &contract)) != OPRT_SUCCESS)
        return s;
    contract.op = "oprt_execute_softmax";
    return finish_create(op, kBackends, plan, contract, out->data, desc);
}

oprt_status_t oprt_get_softmax_workspace_size(oprt_softmax_descriptor_t desc, size_t *size) {
    return workspace_size("oprt_get_softmax_workspace_size", desc, size);
}

oprt_status_t oprt_execute_softmax(oprt_softmax_descriptor_t desc, void *workspace,
                                size_t workspace_size, void *out, const void *in,
                                oprt_stream_t stream) {
    ExecArgs args;
    args.out = out;
    args.in0 = in;
    args.workspace = workspace;
    args.workspace_size = workspace_size;
    args.stream = stream;
    return execute("oprt_execute_softmax", desc, kBackends, args);
}

oprt_status_t oprt_check_softmax_execute(oprt_softmax_descriptor_t desc, const void *out, const void *in) {
    return check_operands("oprt_check_softmax_execute", desc, out, in, nullptr);
}

oprt_status_t oprt_get_softmax_kernel_name(oprt_softmax_descriptor_t desc, const char **name) {
    return kernel_name("oprt_get_softmax_kernel_name", desc, name);
}

oprt_status_t oprt_list_softmax_variants(oprt_backend_t backend, const char **names, int capacity, int *count) {
    return list_variants("softmax", kBackends, backend, names, capacity, count);
}

oprt_status_t oprt_set_softmax_variant(oprt_softmax_descriptor_t desc, const char *name) {
    return set_variant("softmax", desc, kBackends, name);
}

oprt_status_t oprt_destroy_softmax_descriptor(oprt_softmax_descriptor_t desc) {
    return destroy("oprt_destroy_softmax_descriptor", desc);
}

}  // extern "C"
