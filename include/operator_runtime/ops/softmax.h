/* softmax: out = exp(in - max) / sum(exp(in - max)) along one axis (negative
 * counts from the end). out has in's shape. NaN propagates; a slice that is
 * all -inf gives NaN, as in PyTorch. */
#ifndef OPERATOR_RUNTIME_OPS_SOFTMAX_H_
#define OPERATOR_RUNTIME_OPS_SOFTMAX_H_

#include "operator_runtime/api.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct oprt_softmax_descriptor *oprt_softmax_descriptor_t;

OPRT_API oprt_status_t oprt_create_softmax_descriptor(oprt_softmax_descriptor_t *desc,
                                                      const oprt_tensor_view_t *out,
                                                      const oprt_tensor_view_t *in, int64_t axis);
OPRT_API oprt_status_t oprt_get_softmax_workspace_size(oprt_softmax_descriptor_t desc,
                                                       size_t *size);
OPRT_API oprt_status_t oprt_execute_softmax(oprt_softmax_descriptor_t desc, void *workspace,
                                            size_t workspace_size, void *out, const void *in,
                                            oprt_stream_t stream);
/* The kernel the descriptor's plan picked for its backend and shape, e.g.
 * "cpu.rows_buffered": for logs and benchmarks, not a stable interface. *name is
 * static storage, valid while the library is loaded. */
OPRT_API oprt_status_t oprt_get_softmax_kernel_name(oprt_softmax_descriptor_t desc,
                                                    const char **name);
OPRT_API oprt_status_t oprt_destroy_softmax_descriptor(oprt_softmax_descriptor_t desc);

#ifdef __cplusplus
}
#endif

#endif /* OPERATOR_RUNTIME_OPS_SOFTMAX_H_ */
