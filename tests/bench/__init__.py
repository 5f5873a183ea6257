"""Benchmarks, one module per operator: `prepare(out, *inputs, backend, **params)` builds
our PreparedOp, PEERS[library](out, *inputs, **params) the same computation in numpy (CPU)
or torch (GPU); both return their result. The cases are BENCH in tests/cases/<op>.py."""

import importlib


def load(op):
    return importlib.import_module(f"{__name__}.{op}")
