// matmul: the public symbols. Validates once, plans, dispatches to a backend.
#include "operator_runtime/ops/matmul.h"

#include "runtime/internal/dtype.h"
#include "runtime/internal/frontend.h"
#include "ops/matmul/matmul_backends.h"

struct oprt_matmul_descriptor : oprt::Descriptor<oprt::MatmulPlan> {};

namespace {
using namespace oprt;

const BackendTable<MatmulPlan> kBackends = {
    {&matmul::cpu::run, &matmul::cpu::plan, &matmul::cpu::ladder},
    {OPRT_NVIDIA_ENTRY(matmul::nvidia::run), OPRT_NVIDIA_ENTRY(matmul::nvidia::plan), OPRT_NVIDIA_ENTRY(matmul::nvidia::ladder)},
    {OPRT_METAX_ENTRY(matmul::metax::run), OPRT_METAX_ENTRY(matmul::metax::plan), OPRT_METAX_ENTRY(matmul::metax::ladder)},
};

// Checks the three views and fills the plan and the execute contract.
oprt_status_t plan_matmul(const char *op, const oprt_tensor_view_t *out, const oprt_tensor_view_t *a,
                          const oprt_tensor_view_t *b, MatmulPlan *plan, ExecContract *contract) {
    oprt_status_t s;
    if ((s = check_view(op, "out", out)) != OPRT_SUCCESS) return s;
    if ((s = check_view(op, "a", a)) != OPRT_SUCCESS) return s;
    if ((s = check_view(op, "b", b)) != OPRT_SUCCESS) return s;
    if ((s = check_same_dtype(op, "a", a, "out", out)) != OPRT_SUCCESS) return s;
    if ((s = check_same_dtype(op, "b", b, "out", out)) != OPRT_SUCCESS) return s;
    const char *names[3] = {"out", "a", "b"};
    const oprt_tensor_view_t *views[3] = {out, a, b};
    for (int k = 0; k < 3; ++k)
        if (views[k]->ndim != 2)
            return fail(OPRT_ERR_INVALID_ARG, "%s: %s has shape %s (%d dims); matmul takes 2-D a (M, K), "
                        "b (K, N) and out (M, N)", op, names[k], ShapeText(*views[k]).text,
                        int(views[k]->ndim));
    if (a->shape[1] != b->shape[0])
        return fail(OPRT_ERR_INVALID_ARG, "%s: a of shape %s and b of shape %s do not multiply: a's dim 1 "
                    "(K = %lld) must equal b's dim 0 (%lld)", op, ShapeText(*a).text, ShapeText(*b).text,
                    (long long)a->shape[1], (long long)b->shape[0]);
    if (out->shape[0] != a->shape[0] || out->shape[1] != b->shape[1])
        return fail(OPRT_ERR_INVALID_ARG, "%s: out has shape %s but a %s @ b %s has shape (%lld, %lld)", op,
                    ShapeText(*out).text, ShapeText(*a).text, ShapeText(*b).text, (long long)a->shape[0],
                    (long long)b->shape[1]);
    if ((s = check_output_layout(op, "out", out)) != OPRT_SUCCESS) return s;

    *plan = MatmulPlan{};
    plan->dtype = out->dtype;
    plan->m = a->shape[0];
    plan->k = a->shape[1];
    plan->n = b->shape[1];
    // An empty input is never addressed: its strides may be anything, so the plan holds 0.
    const bool k_empty = plan->k == 0;
    plan->a_row = k_empty ? 0 : a->strides[0];
    plan->a_col = k_empty ? 0 : a->strides[1];
    plan->b_row = k_empty ? 0 : b->strides[0];
    plan->b_col = k_empty ? 0 : b->strides[1];
    plan->c_row = out->strides[0];
    plan->c_col = out->strides[1];

    *contract = ExecContract{};
    contract->op = op;
    contract->names[0] = "out";
    contract->names[1] = "a";
    contract->names[2] = "b";
    contract->element_size = dtype_size(out->dtype);
    contract->num_inputs = 2;
    contract->allow_in_place = false;
    contract->out = view_span(*out);
    contract->in[0] = view_span(*a);
    contract->in[1] = view_span(*b);
    return OPRT_SUCCESS;
}
}  // namespace

extern "C" {

oprt_status_t oprt_create_matmul_descriptor(oprt_matmul_descriptor_t *desc, const oprt_tensor_view_t *out,
                                            const oprt_tensor_view_t *a, const oprt_tensor_view_t *b) {
    const char *op = "oprt_create_matmul_descriptor";
    oprt_status_t s = check_desc_out(op, desc);
    if (s != OPRT_SUCCESS) return s;
    MatmulPlan plan;
    ExecContract contract;
    if ((s = plan_matmul(op, out, a, b, &plan, &contract)) != OPRT_SUCCESS) return s;
    contract.op = "oprt_execute_matmul";
    return finish_create(op, kBackends, plan, contract, out->data, desc);
}

oprt_status_t oprt_get_matmul_workspace_size(oprt_matmul_descriptor_t desc, size_t *size) {
    return workspace_size("oprt_get_matmul_workspace_size", desc, size);
}

oprt_status_t oprt_execute_matmul(oprt_matmul_descriptor_t desc, void *workspace, size_t workspace_size,
                                  void *out, const void *a, const void *b, oprt_stream_t stream) {
    ExecArgs args;
    args.out = out;
    args.in0 = a;
    args.in1 = b;
    args.workspace = workspace;
    args.workspace_size = workspace_size;
    args.stream = stream;
    return execute("oprt_execute_matmul", desc, kBackends, args);
}

oprt_status_t oprt_check_matmul_execute(oprt_matmul_descriptor_t desc, const void *out, const void *a,
                                        const void *b) {
    return check_operands("oprt_check_matmul_execute", desc, out, a, b);
}

oprt_status_t oprt_get_matmul_kernel_name(oprt_matmul_descriptor_t desc, const char **name) {
    return kernel_name("oprt_get_matmul_kernel_name", desc, name);
}

oprt_status_t oprt_list_matmul_variants(oprt_backend_t backend, const char **names, int capacity, int *count) {
    return list_variants("matmul", kBackends, backend, names, capacity, count);
}

oprt_status_t oprt_set_matmul_variant(oprt_matmul_descriptor_t desc, const char *name) {
    return set_variant("matmul", desc, kBackends, name);
}

oprt_status_t oprt_destroy_matmul_descriptor(oprt_matmul_descriptor_t desc) {
    return destroy("oprt_destroy_matmul_descriptor", desc);
}

}  // extern "C"
