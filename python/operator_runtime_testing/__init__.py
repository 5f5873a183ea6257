"""The test oracle of operator_runtime, shared by the tests and the benchmark's checks.

Not part of the installed package: it lives in the source tree next to tests/ (the
benchmark harness is tests/benchlib/).

arrays      test arrays (numpy / torch), layouts, random data, NaN poisoning
reference   float64 numpy references of every operator
assertions  tolerances by dtype and the comparison with a reference
backends    which backend and array library a run uses
cases       case descriptions and the routine that checks a case
threads     running test code in several threads at once
"""

from . import arrays, assertions, backends, cases, reference
from .arrays import DTYPES, NUMPY, NumpyLib, TorchLib
from .cases import BenchCase, Case, ErrorCase, OpInfo, Operand, case, run_case, run_error_case

__all__ = [
    "arrays", "assertions", "backends", "cases", "reference",
    "DTYPES", "NUMPY", "NumpyLib", "TorchLib",
    "BenchCase", "Case", "ErrorCase", "OpInfo", "Operand", "case", "run_case", "run_error_case",
]
