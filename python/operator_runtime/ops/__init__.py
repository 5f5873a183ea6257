"""One module per operator; each offers op(...), op_(out, ...) and prepare_op(out, ...)."""

from .copy import copy, copy_, prepare_copy
from .reduce_sum import prepare_reduce_sum, reduce_sum, reduce_sum_
from .relu import prepare_relu, relu, relu_
from .softmax import prepare_softmax, softmax, softmax_
from .vector_add import prepare_vector_add, vector_add, vector_add_
from .silu import silu, silu_, prepare_silu
# camp new-op: imports (scripts/camp_tools/new_op.py adds operators above this line)

__all__ = [
    "copy", "copy_", "prepare_copy",
    "vector_add", "vector_add_", "prepare_vector_add",
    "relu", "relu_", "prepare_relu",
    "reduce_sum", "reduce_sum_", "prepare_reduce_sum",
    "softmax", "softmax_", "prepare_softmax",
    "silu", "silu_", "prepare_silu",
    # camp new-op: names (scripts/camp_tools/new_op.py adds operators above this line)
]
