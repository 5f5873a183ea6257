"""The Python-backend path of PreparedOp (backend="tilelang"), checked on any machine: a
stand-in backend registered under the name "tilelang" computes with numpy, so these tests
need neither tilelang nor a GPU. They check what PreparedOp itself owes a Python backend:
the C library's validation at prepare (a CPU descriptor's create) and at every run
(oprt_check_<op>_execute: overlap, ...), use after destroy, idempotent destroy, the `with`
block, run_inputs checks and the descriptor freed exactly once. The real TileLang kernels
run under --backend tilelang on a GPU (test_cases.py and the others)."""

import gc

import numpy as np
import pytest

import operator_runtime as ort
from operator_runtime import _backends

_MATH = {
    "copy": lambda p, x: x,
    "vector_add": lambda p, a, b: a + b,
    "relu": lambda p, x: np.where(x > 0, x, p.get("negative_slope", 0.0) * x),
    "silu": lambda p, x: x / (1 + np.exp(-x)),
    "reduce_sum": lambda p, x: x.sum(axis=p["dim"]),
    "softmax": lambda p, x: np.exp(x) / np.exp(x).sum(axis=p["dim"], keepdims=True),
}


class _NumpyRunner:
    def __init__(self, op, params):
        self.op, self.params, self.calls = op, params, 0
        self.kernel_name = f"numpy.{op}"

    def __call__(self, arrays):
        self.calls += 1
        out, *inputs = arrays
        out[...] = _MATH[self.op](self.params, *inputs).reshape(out.shape)


@pytest.fixture
def fake_backend(monkeypatch):
    """backend="tilelang" served by numpy for this test; the runners it made."""
    made = []

    def prepare(op, arrays, params):
        made.append(_NumpyRunner(op, params))
        return made[-1]

    monkeypatch.setitem(_backends._registered, "tilelang", prepare)
    return made


def _rand(*shape):
    return np.random.default_rng(7).standard_normal(shape).astype(np.float32)


def test_runs_through_the_runner(fake_backend):
    a, b = _rand(5, 7), _rand(5, 7)
    out = np.full((5, 7), np.nan, np.float32)
    with ort.prepare_vector_add(out, a, b, backend="tilelang") as op:
        assert op.backend == "tilelang" and op.kernel_name == "numpy.vector_add"
        op.run()
        np.testing.assert_allclose(out, a + b, rtol=1e-6)
    assert fake_backend[0].calls == 1


@pytest.mark.parametrize("call, match", [
    (lambda x: ort.copy_(x[1:], x[:-1], backend="tilelang"), r"dst overlaps src"),
    (lambda x: ort.prepare_vector_add(x[1:9], x[:8], x[2:10], backend="tilelang").run(),
     r"out overlaps a"),
    (lambda x: ort.prepare_softmax(x, x, backend="tilelang").run(), r"cannot run in place"),
    (lambda x: ort.prepare_reduce_sum(x[:1], x, dim=0, backend="tilelang").run(),
     r"out overlaps in"),
])
def test_overlap_is_refused_before_the_runner(fake_backend, call, match):
    """The checks of oprt_execute_<op> (runtime/tensor.cc) run for a Python backend too,
    with the same messages, and the runner is never called."""
    with pytest.raises(ValueError, match=match):
        call(_rand(10))
    assert all(r.calls == 0 for r in fake_backend)


def test_exact_in_place_is_allowed_where_the_op_allows_it(fake_backend):
    x = _rand(33)
    expected = np.maximum(x, 0)
    with ort.prepare_relu(x, x, backend="tilelang") as op:
        op.run()
    np.testing.assert_array_equal(x, expected)


def test_run_inputs_checks_each_run(fake_backend):
    out, src = np.zeros(10, np.float32), _rand(10)
    with ort.prepare_copy(out, src, backend="tilelang") as op:
        with pytest.raises(ValueError, match=r"src has shape \(9,\)"):
            op.run_inputs(out, src[:9])
        shared = _rand(20)
        with pytest.raises(ValueError, match=r"dst overlaps src"):
            op.run_inputs(shared[5:15], shared[:10])  # the prepared layout, but overlapping
        op.run_inputs(out, src)
    np.testing.assert_array_equal(out, src)
    assert fake_backend[0].calls == 1


@pytest.mark.parametrize("how", ["destroy", "destroy_twice", "with"])
def test_every_use_after_destroy_raises(fake_backend, how):
    out, src = np.zeros(4, np.float32), _rand(4)
    op = ort.prepare_copy(out, src, backend="tilelang")
    if how == "with":
        with op:
            pass
    else:
        op.destroy()
        if how == "destroy_twice":
            op.destroy()
    for use in (op.run, lambda: op.run_inputs(out, src), lambda: op.kernel_name):
        with pytest.raises(ort.OperatorRuntimeError, match="destroyed"):
            use()
    assert "destroyed" in repr(op)
    assert fake_backend[0].calls == 0


def test_the_cpu_descriptor_is_freed_exactly_once(fake_backend):
    frees = []
    out, src = np.zeros(4, np.float32), _rand(4)
    op = ort.prepare_copy(out, src, backend="tilelang")
    real = op._destroy_c
    op._destroy_c = lambda desc: frees.append(desc) or real(desc)
    op.destroy()
    op.destroy()
    del op
    gc.collect()
    assert len(frees) == 1
    cycle = ort.prepare_copy(out, src, backend="tilelang")
    cycle.me = cycle
    cycle._destroy_c = lambda desc: frees.append(desc) or real(desc)
    del cycle
    gc.collect()
    assert len(frees) == 2


def test_a_runner_that_fails_at_prepare_frees_the_descriptor(monkeypatch):
    def failing(op, arrays, params):
        raise RuntimeError("no kernel")

    monkeypatch.setitem(_backends._registered, "tilelang", failing)
    with pytest.raises(RuntimeError, match="no kernel"):
        ort.prepare_copy(np.zeros(4, np.float32), _rand(4), backend="tilelang")


def test_variants_are_refused(fake_backend):
    with pytest.raises(ValueError, match="no kernel variants"):
        ort.prepare_copy(np.zeros(4, np.float32), _rand(4), backend="tilelang", variant="vec16")
