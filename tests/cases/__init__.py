"""Correctness, api-error and benchmark cases, one module per operator.

Each module defines OP (an OpInfo), CASES, ERROR_CASES and BENCH ({"cpu": [...],
"gpu": [...]}); pytest (tests/op_tests) and tests/run_ops.py run the same lists.
"""

import importlib

OPS = (
    "copy",
    "vector_add",
    "relu",
    "reduce_sum",
    "softmax",
    "silu",
    # camp new-op: operators (scripts/camp_tools/new_op.py adds operators above this line)
)


def load(op):
    return importlib.import_module(f"{__name__}.{op}")
