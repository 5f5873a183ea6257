"""Every shared case of every operator (tests/cases/<op>.py) in every dtype and every
kernel variant the run selects (--variant, see conftest.py), and every error case.
Operator-specific checks live in test_<op>.py."""

import pytest

import cases as case_modules
from operator_runtime_testing import DTYPES, run_case, run_error_case
from operator_runtime_testing.cases import case
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
    except Exception as exc:  # noqa: BLE001 (only a ladder step's NOT_SUPPORTED is a skip)
        if variant != "auto" and is_not_supported(exc):  # the plan runs every layout
            pytest.skip(f"variant {variant}: {exc}")
        raise
    assert result.ok, f"{result.message} (seed {seed})"


# The plain dense case of each operator with a CPU ladder: every step must run it (a step may
# decline other layouts, which test_case then skips with the library's reason). The GPU
# ladders' dense cases: tests/cpp/nvidia/variants_test.cc.
DENSE = {
    "softmax": case("dense_37x1000", (37, 1000), params={"dim": -1}),
    "reduce_sum": case("dense_37x1000", (37, 1000), params={"dim": -1}),
    "matmul": case("dense_33x40x17", (33, 40), (40, 17)),
}


@pytest.mark.parametrize("op", [m.OP for m in OPS if m.OP.name in DENSE], ids=lambda o: o.name)
def test_every_cpu_step_runs_the_dense_case(op, target, seed):
    if target.resolved != "cpu" or target.skip_reason:
        pytest.skip("the CPU ladders only (run with --backend cpu)")
    steps = [v for v in variants_for(target, op.name, "all") if v != "auto"]
    assert steps, f"{op.name} lists no ladder steps on the CPU"
    for v in steps:
        result = run_case(op, DENSE[op.name], "f32", target.lib, target.backend, seed, variant=v)
        assert result.ok, f"{op.name} step {v}: {result.message} (seed {seed})"


@pytest.mark.parametrize("err", ERROR_CASES)
def test_error(err, target):
    if target.lib.name not in err.libs:
        pytest.skip(f"{err.name} needs {' or '.join(err.libs)} arrays")
    ok, message = run_error_case(err, target.lib, target.backend)
    assert ok, message
