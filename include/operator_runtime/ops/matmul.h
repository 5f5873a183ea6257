/* matmul: out = a @ b for 2-D a (M, K), b (K, N) and out (M, N): out[i][j] =
 * sum over p of a[i][p] * b[p][j], products summed in f32 and rounded once to
 * the dtype. Any strides (row- or column-major, sliced, transposed; an input
 * stride may be 0). K = 0 gives zeros. NaN and inf propagate as in the sum of
 * products (inf * 0 is NaN). out must not overlap a or b. */
#ifndef OPERATOR_RUNTIME_OPS_MATMUL_H_
#define OPERATOR_RUNTIME_OPS_MATMUL_H_

#include "operator_runtime/api.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct oprt_matmul_descriptor *oprt_matmul_descriptor_t;

OPRT_API oprt_status_t oprt_create_matmul_descriptor(oprt_matmul_descriptor_t *desc,
                                                     const oprt_tensor_view_t *out,
                                                     const oprt_tensor_view_t *a,
                                                     const oprt_tensor_view_t *b);
OPRT_API oprt_status_t oprt_get_matmul_workspace_size(oprt_matmul_descriptor_t desc, size_t *size);
OPRT_API oprt_status_t oprt_execute_matmul(oprt_matmul_descriptor_t desc, void *workspace,
                                           size_t workspace_size, void *out, const void *a,
                                           const void *b, oprt_stream_t stream);
/* The operand checks of oprt_execute_matmul alone (NULL data, element alignment,
 * overlap between the output and the inputs), running nothing: for a caller that
 * launches its own kernel on this descriptor's arrays (the Python backends).
 * The workspace is not checked; errors are those oprt_execute_matmul reports. */
OPRT_API oprt_status_t oprt_check_matmul_execute(oprt_matmul_descriptor_t desc, const void *out,
                                                 const void *a, const void *b);
/* The kernel the descriptor's plan picked for its backend and shape, e.g.
 * "cpu.packed": for logs and benchmarks, not a stable interface. *name is
 * static storage, valid while the library is loaded. */
OPRT_API oprt_status_t oprt_get_matmul_kernel_name(oprt_matmul_descriptor_t desc,
                                                   const char **name);
/* Kernel variants (see docs/architecture.md, "Kernel variants"), as for every
 * operator: oprt_list_matmul_variants names them plain to fastest (preceded by
 * "student" when an exercise is built in); oprt_set_matmul_variant replaces the
 * plan's choice ("auto" restores it; OPRT_ERR_NOT_SUPPORTED, saying why, for a
 * variant that cannot run this layout or dtype). */
OPRT_API oprt_status_t oprt_list_matmul_variants(oprt_backend_t backend, const char **names,
                                                 int capacity, int *count);
OPRT_API oprt_status_t oprt_set_matmul_variant(oprt_matmul_descriptor_t desc, const char *name);
OPRT_API oprt_status_t oprt_destroy_matmul_descriptor(oprt_matmul_descriptor_t desc);

#ifdef __cplusplus
}
#endif

#endif /* OPERATOR_RUNTIME_OPS_MATMUL_H_ */
