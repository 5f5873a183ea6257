/* Operator runtime: everything a caller needs, in one include. */
#ifndef OPERATOR_RUNTIME_OPERATOR_RUNTIME_H_
#define OPERATOR_RUNTIME_OPERATOR_RUNTIME_H_

#include "operator_runtime/api.h"
#include "operator_runtime/ops/copy.h"
#include "operator_runtime/ops/reduce_sum.h"
#include "operator_runtime/ops/relu.h"
#include "operator_runtime/ops/softmax.h"
#include "operator_runtime/ops/vector_add.h"
#include "operator_runtime/ops/silu.h"
/* camp new-op: includes (scripts/camp_tools/new_op.py adds operators above this line) */

#endif /* OPERATOR_RUNTIME_OPERATOR_RUNTIME_H_ */
