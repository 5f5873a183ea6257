/* reduce_sum: out = sum of in over one axis (negative counts from the end).
 * out has in's shape with that axis removed, or kept as size 1; both are
 * accepted. An empty axis sums to 0. Accumulation is in f32 or wider. */
#ifndef OPERATOR_RUNTIME_OPS_REDUCE_SUM_H_
#define OPERATOR_RUNTIME_OPS_REDUCE_SUM_H_

#include "operator_runtime/api.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct oprt_reduce_sum_descriptor *oprt_reduce_sum_descriptor_t;

OPRT_API oprt_status_t oprt_create_reduce_sum_descriptor(oprt_reduce_sum_descriptor_t *desc,
                                                         const oprt_tensor_view_t *out,
                                                         const oprt_tensor_view_t *in,
                                                         int64_t axis);
OPRT_API oprt_status_t oprt_get_reduce_sum_workspace_size(oprt_reduce_sum_descriptor_t desc,
                                                          size_t *size);
OPRT_API oprt_status_t oprt_execute_reduce_sum(oprt_reduce_sum_descriptor_t desc, void *workspace,
                                               size_t workspace_size, void *out, const void *in,
                                               oprt_stream_t stream);
/* The operand checks of oprt_execute_reduce_sum alone (NULL data, element alignment,
 * overlap between the output and the inputs), running nothing: for a caller that
 * launches its own kernel on this descriptor's arrays (the Python backends).
 * The workspace is not checked; errors are those oprt_execute_reduce_sum reports. */
OPRT_API oprt_status_t oprt_check_reduce_sum_execute(oprt_reduce_sum_descriptor_t desc, const void *out, const void *in);
/* The kernel the descriptor's plan picked for its backend and shape, e.g.
 * "cpu.rows_dense": for logs and benchmarks, not a stable interface. *name is
 * static storage, valid while the library is loaded. */
OPRT_API oprt_status_t oprt_get_reduce_sum_kernel_name(oprt_reduce_sum_descriptor_t desc,
                                                       const char **name);
/* Kernel variants (see docs/architecture.md, "Kernel variants"): the names of
 * this operator's variants on `backend`, plain to fastest (the last is the
 * fastest), preceded by "student" when an exercise is built in. Writes up to
 * `capacity` names (static storage) and sets *count to how many exist; names
 * may be NULL with capacity 0 to ask the count. A backend without a ladder
 * lists "auto". OPRT_ERR_BACKEND_UNAVAILABLE for a backend not built in;
 * OPRT_ERR_INVALID_ARG for AUTO or a value that is no backend (as oprt_set_backend). */
OPRT_API oprt_status_t oprt_list_reduce_sum_variants(oprt_backend_t backend, const char **names,
                                                     int capacity, int *count);
/* Replaces the plan's kernel choice by the named variant of the descriptor's
 * backend; "auto" restores the plan's choice. An unknown name is
 * OPRT_ERR_INVALID_ARG (the message lists the valid names); a variant that
 * cannot run this descriptor's shape, layout or dtype is OPRT_ERR_NOT_SUPPORTED
 * (the message says why) and leaves the descriptor unchanged. The workspace
 * size and kernel name may change: query them after this call. Not to be
 * called while the descriptor executes in another thread. */
OPRT_API oprt_status_t oprt_set_reduce_sum_variant(oprt_reduce_sum_descriptor_t desc, const char *name);
OPRT_API oprt_status_t oprt_destroy_reduce_sum_descriptor(oprt_reduce_sum_descriptor_t desc);

#ifdef __cplusplus
}
#endif

#endif /* OPERATOR_RUNTIME_OPS_REDUCE_SUM_H_ */
