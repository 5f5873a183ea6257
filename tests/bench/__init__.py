"""Benchmarks, one module per operator: `prepare(out, *inputs, backend, **params)` builds
our PreparedOp; PEERS[library](out, *inputs, **params) returns a function computing the same
in numpy (CPU) or torch (GPU) that returns its result (on GPUs it also serves, in float64, as
the reference of the benchmark's check; an optional tolerance64(dtype, inputs64, params)
replaces the case module's tolerance there). GPU_PEERS (optional): more GPU peers by name
(torch.compile, Triton, QuACK: tests/benchlib/peers.py), each run where it is importable and takes
the case, "n/a" with the reason elsewhere. The cases are BENCH in tests/cases/<op>.py;
tests/benchlib/bench.py runs them."""

import importlib


def load(op):
    return importlib.import_module(f"{__name__}.{op}")
