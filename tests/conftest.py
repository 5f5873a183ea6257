"""pytest options and fixtures shared by tests/op_tests.

--backend auto|cpu|nvidia|metax|tilelang (default auto: the GPU backend when one is built
and a device is visible, else cpu). Tests that need a backend that cannot run here skip
with the reason (pytest -rs prints it). --gpu N|last puts the GPU tests' tensors on that
device while device 0 stays torch's current device (the calls must run where their tensors
live); default: the current device. --seed repeats a run's random data; by default a
fresh seed is drawn and printed in the header.
--variant NAME|all: the kernel variant(s) the shared cases (test_cases.py) run on. "all"
(the default) is "auto" (the plan's choice) plus every step of the target backend's kernel
ladder (operator_runtime.variants(op, backend)): the whole ladder on GPU backends and, on the
CPU, the ladders of softmax, reduce_sum and matmul (ops/<op>/cpu/ladder.cc); "auto" alone elsewhere. "student", an exercise's
variant (scripts/camp.py exercise), runs only when named: --variant student. A variant
that cannot run a case's layout (OPRT_ERR_NOT_SUPPORTED) skips it with the reason; its
support of the plain dense case is checked by test_cases.py's
test_every_cpu_step_runs_the_dense_case (CPU) and tests/cpp/nvidia/variants_test.cc (NVIDIA).
"""

import random
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]
for path in (REPO / "python", REPO / "tests"):  # the package (or the test oracle alone, beside an installed package) and tests/cases
    if str(path) not in sys.path:
        sys.path.insert(0, str(path))

import operator_runtime as ort  # noqa: E402
from operator_runtime_testing import backends, cases  # noqa: E402

_state = {}


def pytest_addoption(parser):
    parser.addoption("--backend", default="auto",
                     choices=("auto", "cpu", "nvidia", "metax", "tilelang"),
                     help="backend the operator tests run on (default: auto)")
    parser.addoption("--gpu", default=None,
                     help="GPU index (or 'last') the GPU tests' tensors live on; device 0 stays "
                          "current (default: the current device)")
    parser.addoption("--variant", default="all",
                     help="kernel variant of the shared cases: NAME or all (default: the plan's "
                          "choice and every ladder step of the backend; never 'student')")
    parser.addoption("--seed", type=int, default=None,
                     help="base seed of the random test data (default: a fresh one, printed)")


def pytest_configure(config):
    seed = config.getoption("--seed")
    _state["seed"] = random.SystemRandom().randrange(2**31) if seed is None else seed
    _state["target"] = backends.select(config.getoption("--backend"), gpu=config.getoption("--gpu"))
    config.oprt_target = _state["target"]  # read by pytest_generate_tests hooks of test modules


def pytest_report_header(config):
    t = _state["target"]
    where = f" on {t.lib.device}" if t.lib.name == "torch" else ""
    line = (f"operator_runtime: --backend {t.backend} runs on {t.resolved} with {t.lib.name} "
            f"arrays{where}; --variant {config.getoption('--variant')}; --seed {_state['seed']}")
    try:
        line += f"; library {ort.library_path()}"
    except ort.OperatorRuntimeError as e:  # none built: the tests that need it say so
        line += f"; no library ({e})"
    return [line + (f"; SKIPPED: {t.skip_reason}" if t.skip_reason else "")]


@pytest.fixture(scope="session")
def target():
    """The backend and array library of this run (skips when it cannot run here)."""
    t = _state["target"]
    if t.skip_reason:
        pytest.skip(t.skip_reason)
    return t


@pytest.fixture
def seed(request):
    """This test's seed: the run's base seed mixed with the test's id."""
    return cases.case_seed(_state["seed"], request.node.nodeid)
