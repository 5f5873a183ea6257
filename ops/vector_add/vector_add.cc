// vector_add: the public symbols. Validates once, plans, dispatches to a backend.
#include "operator_runtime/ops/vector_add.h"

#include "runtime/internal/frontend.h"
#include "ops/vector_add/vector_add_backends.h"

struct oprt_vector_add_descriptor : oprt::Descriptor<oprt::ElementwisePlan> {};

namespace {
using namespace oprt;

const BackendTable<ElementwisePlan> kBackends = {
    {&vector_add::cpu::run, &vector_add::cpu::plan},
    {OPRT_NVIDIA_ENTRY(vector_add::nvidia::run), OPRT_NVIDIA_ENTRY(vector_add::nvidia::plan), OPRT_NVIDIA_ENTRY(vector_add::nvidia::ladder)},
    {OPRT_METAX_ENTRY(vector_add::metax::run), OPRT_METAX_ENTRY(vector_add::metax::plan), OPRT_METAX_ENTRY(vector_add::metax::ladder)},
};
}  // namespace

extern "C" {

oprt_status_t oprt_create_vector_add_descriptor(oprt_vector_add_descriptor_t *desc,
                                                const oprt_tensor_view_t *out,
                                                const oprt_tensor_view_t *a,
                                                const oprt_tensor_view_t *b) {
    const char *op = "oprt_create_vector_add_descriptor";
    oprt_status_t s = check_desc_out(op, desc);
    if (s != OPRT_SUCCESS) return s;
    const char *in_args[] = {"a", "b"};
    const oprt_tensor_view_t *ins[] = {a, b};
    ElementwisePlan plan;
    ExecContract contract;
    if ((s = plan_elementwise(op, "out", out, in_args, ins, 2, &plan, &contract)) != OPRT_SUCCESS)
        return s;
    contract.op = "oprt_execute_vector_add";
    return finish_create(op, kBackends, plan, contract, out->data, desc);
}

oprt_status_t oprt_get_vector_add_workspace_size(oprt_vector_add_descriptor_t desc, size_t *size) {
    return workspace_size("oprt_get_vector_add_workspace_size", desc, size);
}

oprt_status_t oprt_execute_vector_add(oprt_vector_add_descriptor_t desc, void *workspace,
                                      size_t workspace_size, void *out, const void *a,
                                      const void *b, oprt_stream_t stream) {
    ExecArgs args;
    args.out = out;
    args.in0 = a;
    args.in1 = b;
    args.workspace = workspace;
    args.workspace_size = workspace_size;
    args.stream = stream;
    return execute("oprt_execute_vector_add", desc, kBackends, args);
}

oprt_status_t oprt_check_vector_add_execute(oprt_vector_add_descriptor_t desc, const void *out, const void *a, const void *b) {
    return check_operands("oprt_check_vector_add_execute", desc, out, a, b);
}

oprt_status_t oprt_get_vector_add_kernel_name(oprt_vector_add_descriptor_t desc,
                                              const char **name) {
    return kernel_name("oprt_get_vector_add_kernel_name", desc, name);
}

oprt_status_t oprt_list_vector_add_variants(oprt_backend_t backend, const char **names, int capacity, int *count) {
    return list_variants("vector_add", kBackends, backend, names, capacity, count);
}

oprt_status_t oprt_set_vector_add_variant(oprt_vector_add_descriptor_t desc, const char *name) {
    return set_variant("vector_add", desc, kBackends, name);
}

oprt_status_t oprt_destroy_vector_add_descriptor(oprt_vector_add_descriptor_t desc) {
    return destroy("oprt_destroy_vector_add_descriptor", desc);
}

}  // extern "C"
