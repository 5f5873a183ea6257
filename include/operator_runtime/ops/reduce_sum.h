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
/* The kernel the descriptor's plan picked for its backend and shape, e.g.
 * "cpu.rows_dense": for logs and benchmarks, not a stable interface. *name is
 * static storage, valid while the library is loaded. */
OPRT_API oprt_status_t oprt_get_reduce_sum_kernel_name(oprt_reduce_sum_descriptor_t desc,
                                                       const char **name);
OPRT_API oprt_status_t oprt_destroy_reduce_sum_descriptor(oprt_reduce_sum_descriptor_t desc);

#ifdef __cplusplus
}
#endif

#endif /* OPERATOR_RUNTIME_OPS_REDUCE_SUM_H_ */
