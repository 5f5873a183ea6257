"""Every shared case of every operator (tests/cases/<op>.py) in every dtype, and every
error case. Operator-specific checks live in test_<op>.py."""

import pytest

import cases as case_modules
from operator_runtime_testing import DTYPES, run_case, run_error_case

OPS = tuple(case_modules.load(op) for op in case_modules.OPS)  # every operator: tests/cases
CASES = [pytest.param(m.OP, c, id=f"{m.OP.name}-{c.name}") for m in OPS for c in m.CASES]
ERROR_CASES = [pytest.param(e, id=f"{m.OP.name}-{e.name}") for m in OPS for e in m.ERROR_CASES]


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("op, case", CASES)
def test_case(op, case, dtype, target, seed):
    result = run_case(op, case, dtype, target.lib, target.backend, seed,
                      torch_check=target.on_gpu)
    assert result.ok, f"{result.message} (seed {seed})"


@pytest.mark.parametrize("err", ERROR_CASES)
def test_error(err, target):
    if target.lib.name not in err.libs:
        pytest.skip(f"{err.name} needs {' or '.join(err.libs)} arrays")
    ok, message = run_error_case(err, target.lib, target.backend)
    assert ok, message
