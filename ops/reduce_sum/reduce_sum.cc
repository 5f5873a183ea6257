// reduce_sum: the public symbols. Validates once, plans, dispatches to a backend.
#include "operator_runtime/ops/reduce_sum.h"

#include "runtime/internal/frontend.h"
#include "ops/reduce_sum/reduce_sum_backends.h"

struct oprt_reduce_sum_descriptor : oprt::Descriptor<oprt::AxisPlan> {};

namespace {
using namespace oprt;

const BackendTable<AxisPlan> kBackends = {
    {&reduce_sum::cpu::run, &reduce_sum::cpu::plan, &reduce_sum::cpu::ladder},
    {OPRT_NVIDIA_ENTRY(reduce_sum::nvidia::run), OPRT_NVIDIA_ENTRY(reduce_sum::nvidia::plan), OPRT_NVIDIA_ENTRY(reduce_sum::nvidia::ladder)},
    {OPRT_METAX_ENTRY(reduce_sum::metax::run), OPRT_METAX_ENTRY(reduce_sum::metax::plan), OPRT_METAX_ENTRY(reduce_sum::metax::ladder)},
};
}  // namespace

extern "C" {

oprt_status_t oprt_create_reduce_sum_descriptor(oprt_reduce_sum_descriptor_t *desc,
                                          const oprt_tensor_view_t *out,
                                          const oprt_tensor_view_t *in, int64_t axis) {
    const char *op = "oprt_create_reduce_sum_descriptor";
    oprt_status_t s = check_desc_out(op, desc);
    if (s != OPRT_SUCCESS) return s;
    AxisPlan plan;
    ExecContract contract;
    if ((s = plan_axis(op, out, in, axis, /*reduce=*/true, &plan, &contract)) != OPRT_SUCCESS)
        return s;
    contract.op = "oprt_execute_reduce_sum";
    return finish_create(op, kBackends, plan, contract, out->data, desc);
}

oprt_status_t oprt_get_reduce_sum_workspace_size(oprt_reduce_sum_descriptor_t desc, size_t *size) {
    return workspace_size("oprt_get_reduce_sum_workspace_size", desc, size);
}

oprt_status_t oprt_execute_reduce_sum(oprt_reduce_sum_descriptor_t desc, void *workspace,
                                size_t workspace_size, void *out, const void *in,
                                oprt_stream_t stream) {
    ExecArgs args;
    args.out = out;
    args.in0 = in;
    args.workspace = workspace;
    args.workspace_size = workspace_size;
    args.stream = stream;
    return execute("oprt_execute_reduce_sum", desc, kBackends, args);
}

oprt_status_t oprt_check_reduce_sum_execute(oprt_reduce_sum_descriptor_t desc, const void *out, const void *in) {
    return check_operands("oprt_check_reduce_sum_execute", desc, out, in, nullptr);
}

oprt_status_t oprt_get_reduce_sum_kernel_name(oprt_reduce_sum_descriptor_t desc,
                                              const char **name) {
    return kernel_name("oprt_get_reduce_sum_kernel_name", desc, name);
}

oprt_status_t oprt_list_reduce_sum_variants(oprt_backend_t backend, const char **names, int capacity, int *count) {
    return list_variants("reduce_sum", kBackends, backend, names, capacity, count);
}

oprt_status_t oprt_set_reduce_sum_variant(oprt_reduce_sum_descriptor_t desc, const char *name) {
    return set_variant("reduce_sum", desc, kBackends, name);
}

oprt_status_t oprt_destroy_reduce_sum_descriptor(oprt_reduce_sum_descriptor_t desc) {
    return destroy("oprt_destroy_reduce_sum_descriptor", desc);
}

}  // extern "C"
