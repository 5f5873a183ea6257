/* vector_add: out = a + b, with a and b broadcast to out's shape by numpy rules. */
#ifndef OPERATOR_RUNTIME_OPS_VECTOR_ADD_H_
#define OPERATOR_RUNTIME_OPS_VECTOR_ADD_H_

#include "operator_runtime/api.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct oprt_vector_add_descriptor *oprt_vector_add_descriptor_t;

OPRT_API oprt_status_t oprt_create_vector_add_descriptor(oprt_vector_add_descriptor_t *desc,
                                                         const oprt_tensor_view_t *out,
                                                         const oprt_tensor_view_t *a,
                                                         const oprt_tensor_view_t *b);
OPRT_API oprt_status_t oprt_get_vector_add_workspace_size(oprt_vector_add_descriptor_t desc,
                                                          size_t *size);
OPRT_API oprt_status_t oprt_execute_vector_add(oprt_vector_add_descriptor_t desc, void *workspace,
                                               size_t workspace_size, void *out, const void *a,
                                               const void *b, oprt_stream_t stream);
/* The kernel the descriptor's plan picked for its backend and shape, e.g.
 * "cpu.contiguous": for logs and benchmarks, not a stable interface. *name is
 * static storage, valid while the library is loaded. */
OPRT_API oprt_status_t oprt_get_vector_add_kernel_name(oprt_vector_add_descriptor_t desc,
                                                       const char **name);
OPRT_API oprt_status_t oprt_destroy_vector_add_descriptor(oprt_vector_add_descriptor_t desc);

#ifdef __cplusplus
}
#endif

#endif /* OPERATOR_RUNTIME_OPS_VECTOR_ADD_H_ */
