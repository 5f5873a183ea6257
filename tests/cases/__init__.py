"""Correctness, api-error and benchmark cases, one module per operator.

Each module defines OP (an OpInfo), CASES, ERROR_CASES and BENCH ({"cpu": [...],
"gpu": [...]}); pytest (tests/op_tests) and tests/run_ops.py run the same lists.
OPS, the operators, are those of the manifest (ops/manifest.json), in its order.
"""

import importlib

from operator_runtime import _manifest

OPS = _manifest.names()


def load(op):
    return importlib.import_module(f"{__name__}.{op}")
