"""Every shared case of every operator (tests/cases/<op>.py) in every dtype and every
kernel variant the run selects (--variant, see conftest.py), and every error case.
Operator-specific checks live in test_<op>.py."""

import pytest

import cases as case_modules
from operator_runtime_testing import DTYPES, run_case, run_error_case
from operator_runtime_testing.backends import is_not_supported, variant_unavailable, variants_for

OPS = tuple(case_modules.load(op) for op in case_modules.OPS)  # every operator: tests/cases
ERROR_CASES = [pytest.param(e, id=f"{m.OP.name}-{e.name}") for m in OPS for e in m.ERROR_CASES]


def pytest_generate_tests(metafunc):
    if metafunc.function.__name__ != "test_case":
        return
    target, selection = metafunc.config.oprt_target, metafunc.config.getoption("--variant")
    params = []
    for m in OPS:
        for v in variants_for(target, m.OP.name, selection):
            suffix = "" if v == "auto" else f"-{v}"  # the plan's choice keeps the plain id
            params += [pytest.param(m.OP, c, v, id=f"{m.OP.name}-{c.name}{suffix}")
                       for c in m.CASES]
    metafunc.parametrize("op, case, variant", params)


@pytest.mark.parametrize("dtype", DTYPES)
def test_case(op, case, variant, dtype, target, seed):
    why = variant_unavailable(target, op.name, variant)
    if why:
        pytest.skip(why)
    try:
        result = run_case(op, case, dtype, target.lib, target.backend, seed,
                          torch_check=target.on_gpu,
                          variant=None if variant == "auto" else variant)
    except Exception as exc:  # noqa: BLE001 (only NOT_SUPPORTED is a skip)
        if is_not_supported(exc):
            pytest.skip(f"variant {variant}: {exc}")
        raise
    assert result.ok, f"{result.message} (seed {seed})"


@pytest.mark.parametrize("err", ERROR_CASES)
def test_error(err, target):
    if target.lib.name not in err.libs:
        pytest.skip(f"{err.name} needs {' or '.join(err.libs)} arrays")
    ok, message = run_error_case(err, target.lib, target.backend)
    assert ok, message
