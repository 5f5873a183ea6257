// copy: the public symbols. Validates once, plans, dispatches to a backend.
#include "operator_runtime/ops/copy.h"

#include "runtime/internal/frontend.h"
#include "ops/copy/copy_backends.h"

struct oprt_copy_descriptor : oprt::Descriptor<oprt::ElementwisePlan> {};

namespace {
using namespace oprt;

const BackendTable<ElementwisePlan> kBackends = {
    {&copy::cpu::run, &copy::cpu::plan},
    {OPRT_NVIDIA_ENTRY(copy::nvidia::run), OPRT_NVIDIA_ENTRY(copy::nvidia::plan), OPRT_NVIDIA_ENTRY(copy::nvidia::ladder)},
    {OPRT_METAX_ENTRY(copy::metax::run), OPRT_METAX_ENTRY(copy::metax::plan), OPRT_METAX_ENTRY(copy::metax::ladder)},
};
}  // namespace

extern "C" {

oprt_status_t oprt_create_copy_descriptor(oprt_copy_descriptor_t *desc,
                                          const oprt_tensor_view_t *dst,
                                          const oprt_tensor_view_t *src) {
    const char *op = "oprt_create_copy_descriptor";
    oprt_status_t s = check_desc_out(op, desc);
    if (s != OPRT_SUCCESS) return s;
    const char *in_args[] = {"src"};
    const oprt_tensor_view_t *ins[] = {src};
    ElementwisePlan plan;
    ExecContract contract;
    if ((s = plan_elementwise(op, "dst", dst, in_args, ins, 1, &plan, &contract)) != OPRT_SUCCESS)
        return s;
    contract.op = "oprt_execute_copy";
    return finish_create(op, kBackends, plan, contract, dst->data, desc);
}

oprt_status_t oprt_get_copy_workspace_size(oprt_copy_descriptor_t desc, size_t *size) {
    return workspace_size("oprt_get_copy_workspace_size", desc, size);
}

oprt_status_t oprt_execute_copy(oprt_copy_descriptor_t desc, void *workspace,
                                size_t workspace_size, void *dst, const void *src,
                                oprt_stream_t stream) {
    ExecArgs args;
    args.out = dst;
    args.in0 = src;
    args.workspace = workspace;
    args.workspace_size = workspace_size;
    args.stream = stream;
    return execute("oprt_execute_copy", desc, kBackends, args);
}

oprt_status_t oprt_check_copy_execute(oprt_copy_descriptor_t desc, const void *dst, const void *src) {
    return check_operands("oprt_check_copy_execute", desc, dst, src, nullptr);
}

oprt_status_t oprt_get_copy_kernel_name(oprt_copy_descriptor_t desc, const char **name) {
    return kernel_name("oprt_get_copy_kernel_name", desc, name);
}

oprt_status_t oprt_list_copy_variants(oprt_backend_t backend, const char **names, int capacity, int *count) {
    return list_variants("copy", kBackends, backend, names, capacity, count);
}

oprt_status_t oprt_set_copy_variant(oprt_copy_descriptor_t desc, const char *name) {
    return set_variant("copy", desc, kBackends, name);
}

oprt_status_t oprt_destroy_copy_descriptor(oprt_copy_descriptor_t desc) {
    return destroy("oprt_destroy_copy_descriptor", desc);
}

}  // extern "C"
