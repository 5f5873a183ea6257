"""Helpers shared by the tests and benchmarks of operator_runtime.

arrays      test arrays (numpy / torch), layouts, random data, NaN poisoning
reference   float64 numpy references of every operator
assertions  tolerances by dtype and the comparison with a reference
backends    which backend and array library a run uses
cases       case descriptions and the routine that checks a case
bench       benchmark cases against the peer library, the copy ceiling, the check
timing      CPU (perf_counter) and GPU (CUDA events, CUDA graphs) timing
report      result tables, report.md and the roofline plot
"""

from . import arrays, assertions, backends, bench, cases, reference, report, timing
from .arrays import DTYPES, NUMPY, NumpyLib, TorchLib
from .cases import BenchCase, Case, ErrorCase, OpInfo, Operand, case, run_case, run_error_case

__all__ = [
    "arrays", "assertions", "backends", "bench", "cases", "reference", "report", "timing",
    "DTYPES", "NUMPY", "NumpyLib", "TorchLib",
    "BenchCase", "Case", "ErrorCase", "OpInfo", "Operand", "case", "run_case", "run_error_case",
]
