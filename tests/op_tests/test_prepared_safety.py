"""PreparedOp safety: it keeps its arrays alive; run_inputs checks new arrays against the
plan (shape, dtype, strides, device, array library) before any C call; every use after
destroy raises; the descriptor is freed exactly once, whether by destroy() (from any
thread, also while another thread runs it), by the garbage collector, or at interpreter
exit."""

import ctypes
import gc
import os
import subprocess
import sys
import threading
import time
import weakref

import numpy as np
import pytest

import operator_runtime as ort
from operator_runtime_testing.assertions import assert_close


def _prepare_all(target, seed, shape=(33, 65)):
    """One PreparedOp of each operator on fresh arrays of `target`."""
    lib, rng = target.lib, np.random.default_rng(seed)
    src, src2 = lib.randn(rng, shape), lib.randn(rng, shape)
    b = target.backend
    return {
        "copy": ort.prepare_copy(lib.empty(shape), src, backend=b),
        "vector_add": ort.prepare_vector_add(lib.empty(shape), src, src2, backend=b),
        "relu": ort.prepare_relu(lib.empty(shape), src, negative_slope=0.1, backend=b),
        "reduce_sum": ort.prepare_reduce_sum(lib.empty(shape[:1]), src, dim=1, backend=b),
        "softmax": ort.prepare_softmax(lib.empty(shape), src, dim=1, backend=b),
    }


class _TimedCalls:
    """Stands in for a PreparedOp's C functions and records when each execute returned
    (for a Python backend: when each run of its runner returned). run()'s compiled call
    (host arrays with the compiled module) gets a Slot calling execute through a ctypes
    callback that records the same."""

    def __init__(self, op):
        self.ends = []
        if op._runner is not None:
            self._runner = op._runner
            op._runner = self._timed_runner
            return
        self._c = op._c
        op._c = self
        if op._slot is not None:
            args = [ctypes.c_void_p, ctypes.c_void_p, ctypes.c_size_t]
            args += [ctypes.c_void_p] * (2 + self._c.num_inputs)
            self._callback = ctypes.CFUNCTYPE(ctypes.c_int, *args)(self.execute)
            op._arm_slot(ctypes.cast(self._callback, ctypes.c_void_p).value)

    def __getattr__(self, name):
        return getattr(self._c, name)

    def _timed_runner(self, arrays):
        self._runner(arrays)
        self.ends.append(time.perf_counter())

    def execute(self, *args):
        status = self._c.execute(*args)
        self.ends.append(time.perf_counter())
        return status


class _CountingDestroy:
    """Wraps a PreparedOp's C destroy function and counts the calls."""

    def __init__(self, op):
        self.calls = 0
        self._real = op._destroy_c
        op._destroy_c = self

    def __call__(self, desc):
        self.calls += 1
        return self._real(desc)


# --- keeps its arrays alive ----------------------------------------------------------


def test_keeps_its_arrays_alive_until_destroyed(target, seed):
    lib = target.lib
    rng = np.random.default_rng(seed)
    out, a, b = lib.full_nan((257,), "f32"), lib.randn(rng, (257,)), lib.randn(rng, (257,))
    expected = lib.to_f64(a) + lib.to_f64(b)
    refs = [weakref.ref(x) for x in (out, a, b)]
    op = ort.prepare_vector_add(out, a, b, backend=target.backend)
    del out, a, b
    gc.collect()
    assert all(r() is not None for r in refs), "an array died while its PreparedOp lives"
    result = op.run()
    lib.synchronize()
    assert_close(lib.to_f64(result), expected, "f32")
    del result
    op.destroy()
    gc.collect()
    assert all(r() is None for r in refs), "destroy() must drop the arrays"


# --- run_inputs checks new arrays against the plan -----------------------------------


def test_run_inputs_rejects_a_different_plan(target, seed):
    lib = target.lib
    rng = np.random.default_rng(seed)
    out, src = lib.full_nan((33, 65), "f32"), lib.randn(rng, (33, 65))
    with ort.prepare_softmax(out, src, dim=1, backend=target.backend) as op:
        bad_calls = [
            # (arrays, error, message)
            ((out,), TypeError, r"takes 2 arrays \(out, src\), got 1"),
            ((out, src, src), TypeError, r"takes 2 arrays"),
            ((out, lib.empty((33, 64))), ValueError, r"src has shape \(33, 64\)"),
            ((out, lib.empty((65, 33))), ValueError, r"src has shape \(65, 33\)"),
            ((lib.empty((33, 65, 1)), src), ValueError, r"out has shape \(33, 65, 1\)"),
            ((out, lib.empty((33, 65), "f16")), TypeError, r"dtype float16"),
            ((lib.empty((33, 65), "bf16"), lib.empty((33, 65), "bf16")), TypeError,
             r"out has dtype bfloat16; prepared with float32"),
            # same shape, other strides: a transposed buffer, every other element
            ((out, lib.permute(lib.empty((65, 33)), (1, 0))), ValueError,
             r"src has shape \(33, 65\), strides \(1, 33\)"),
            ((out, lib.empty((33, 130))[:, ::2]), ValueError, r"strides \(130, 2\)"),
            ((out, [[1.0]]), TypeError, r"src is a builtins\.list"),
            ((out, None), TypeError, r"src is a builtins\.NoneType"),
        ]
        for arrays, error, message in bad_calls:
            with pytest.raises(error, match=message):
                op.run_inputs(*arrays)
        # A rejected call leaves the op usable.
        op.run_inputs(lib.empty((33, 65)), lib.randn(rng, (33, 65)))
        op.run()


def test_run_inputs_rejects_a_read_only_output(target, seed):
    if target.lib.name != "numpy":
        pytest.skip("read-only views are a numpy notion")
    src = np.random.default_rng(seed).standard_normal((4, 8), dtype=np.float32)
    with ort.prepare_relu(np.empty((4, 8), np.float32), src, backend=target.backend) as op:
        frozen = np.empty((4, 8), np.float32)
        frozen.flags.writeable = False
        with pytest.raises(ValueError, match=r"out is read-only"):
            op.run_inputs(frozen, src)


def test_run_inputs_rejects_another_device_or_library(target, seed):
    torch = pytest.importorskip("torch")
    lib = target.lib
    rng = np.random.default_rng(seed)
    out, src = lib.empty((16, 16)), lib.randn(rng, (16, 16))
    with ort.prepare_copy(out, src, backend=target.backend) as op:
        if target.on_gpu:  # torch on the GPU: a host tensor is the wrong device
            with pytest.raises(ValueError, match=r"src is on cpu but dst is on cuda"):
                op.run_inputs(out, torch.zeros((16, 16)))
            with pytest.raises(ValueError, match=r"on cpu; prepared with .* on cuda"):
                op.run_inputs(torch.zeros((16, 16)), torch.zeros((16, 16)))
            with pytest.raises(TypeError, match=r"numpy array; prepared with a torch tensor"):
                op.run_inputs(np.zeros((16, 16), np.float32), np.zeros((16, 16), np.float32))
        else:  # numpy on the host: a torch tensor is another array library
            with pytest.raises(TypeError, match=r"torch tensor; prepared with a numpy array"):
                op.run_inputs(torch.zeros((16, 16)), torch.zeros((16, 16)))


# --- use after destroy raises ---------------------------------------------------------


@pytest.mark.parametrize("how", ["destroy", "with", "destroy_twice"])
def test_every_use_after_destroy_raises(target, seed, how):
    ops = _prepare_all(target, seed)
    for name, op in ops.items():
        arrays = [o.array for o in op._operands]
        if how == "with":
            with op:
                op.run()
        else:
            op.destroy()
            if how == "destroy_twice":
                op.destroy()
        for use in (op.run, lambda: op.run_inputs(*arrays)):
            with pytest.raises(ort.OperatorRuntimeError, match=f"{name}: this PreparedOp was destroyed"):
                use()
        if hasattr(type(op), "kernel_name"):
            with pytest.raises(ort.OperatorRuntimeError, match="destroyed"):
                op.kernel_name  # noqa: B018 (the property is the call under test)
        assert "destroyed" in repr(op)
        op.destroy()  # still a no-op


# --- freed exactly once ---------------------------------------------------------------


def test_destroy_frees_once_and_gc_does_not_free_again(target, seed):
    for op in _prepare_all(target, seed).values():
        counter = _CountingDestroy(op)
        op.destroy()
        op.destroy()
        del op
        gc.collect()
        assert counter.calls == 1


def test_garbage_collection_frees_once(target, seed):
    counters = [_CountingDestroy(op) for op in _prepare_all(target, seed).values()]
    gc.collect()
    assert [c.calls for c in counters] == [1] * len(counters)


def test_reference_cycle_is_freed_once(target, seed):
    op = _prepare_all(target, seed)["softmax"]
    counter = _CountingDestroy(op)
    op.myself = op  # a cycle: only the cycle collector frees it
    del op
    gc.collect()
    assert counter.calls == 1


def test_concurrent_destroy_frees_once(target, seed):
    for op in _prepare_all(target, seed).values():
        counter = _CountingDestroy(op)
        start = threading.Barrier(8)
        errors = []

        def destroy():
            start.wait()
            try:
                op.destroy()
            except Exception as exc:  # noqa: BLE001 (any exception is the failure reported)
                errors.append(exc)

        threads = [threading.Thread(target=destroy) for _ in range(8)]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
        assert not errors and counter.calls == 1


def test_destroy_waits_for_a_run_in_another_thread(target, seed):
    """destroy() from one thread while another runs the op: the run completes on a live
    descriptor (the ASan build reports a use after free otherwise), later runs raise."""
    lib = target.lib
    rng = np.random.default_rng(seed)
    shape = (64, 65536) if target.resolved == "cpu" else (4096, 4096)
    src = lib.randn(rng, shape)
    out = lib.full_nan(shape, "f32")
    op = ort.prepare_softmax(out, src, dim=1, backend=target.backend)
    op.run()  # warm up
    lib.synchronize()
    calls = _TimedCalls(op)
    running, errors = threading.Event(), []

    def runner():
        try:
            for _ in range(1000):
                running.set()
                op.run()
        except ort.OperatorRuntimeError as exc:
            if "destroyed" not in str(exc):
                errors.append(exc)
        except Exception as exc:  # noqa: BLE001
            errors.append(exc)

    thread = threading.Thread(target=runner)
    thread.start()
    running.wait()
    time.sleep(0.01)
    op.destroy()
    destroyed_at = time.perf_counter()
    thread.join()
    assert not errors, errors
    assert calls.ends, "no run completed"
    assert calls.ends[-1] <= destroyed_at, "destroy() returned while a run was still in the C library"
    lib.synchronize()
    row_sums = lib.to_f64(out).sum(axis=1)
    assert_close(row_sums, np.ones_like(row_sums), "f32", (1e-4, 1e-5))


def test_many_threads_share_one_prepared_op(target, seed):
    """run_inputs from 8 threads at once on one PreparedOp, each with its own arrays."""
    lib = target.lib
    rng = np.random.default_rng(seed)
    with ort.prepare_reduce_sum(lib.empty((129,)), lib.randn(rng, (129, 513)), dim=1,
                                backend=target.backend) as op:
        inputs = [lib.randn(rng, (129, 513)) for _ in range(8)]
        outputs = [lib.full_nan((129,), "f32") for _ in range(8)]
        start, errors = threading.Barrier(8), []

        def work(k):
            start.wait()
            try:
                for _ in range(20):
                    op.run_inputs(outputs[k], inputs[k])
            except Exception as exc:  # noqa: BLE001
                errors.append(exc)

        threads = [threading.Thread(target=work, args=(k,)) for k in range(8)]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
        lib.synchronize()
        assert not errors, errors
        for k in range(8):
            single = lib.full_nan((129,), "f32")
            op.run_inputs(single, inputs[k])
            lib.synchronize()
            np.testing.assert_array_equal(lib.to_f64(outputs[k]), lib.to_f64(single))


# --- interpreter exit -----------------------------------------------------------------

_EXIT_SCRIPT = r"""
import gc, sys, threading
import numpy as np
import operator_runtime as ort

backend = sys.argv[1]
if sys.argv[2] == "numpy":
    def arr(shape):
        return np.ones(shape, np.float32)
else:
    import torch
    def arr(shape):
        return torch.ones(shape, device="cuda")

x = arr((64, 300))
kept = []  # alive in a module global at exit
for _ in range(20):
    kept.append(ort.prepare_softmax(arr((64, 300)), x, dim=1, backend=backend))
    kept.append(ort.prepare_reduce_sum(arr((64,)), x, dim=1, backend=backend))
    kept.append(ort.prepare_vector_add(arr((64, 300)), x, x, backend=backend))
    ort.prepare_relu(arr((64, 300)), x, backend=backend)  # collected right away
kept[0].run()
kept[1].destroy()  # destroyed, then collected at exit
cycle = ort.prepare_copy(arr((64, 300)), x, backend=backend)
cycle.me = cycle  # a cycle, freed by the collector at exit
with ort.prepare_softmax(arr((64, 300)), x, backend=backend) as op:
    op.run()
leaked_in_function = None

def make():
    global leaked_in_function
    leaked_in_function = ort.prepare_copy(arr((8,)), arr((8,)), backend=backend)

make()
if sys.argv[3] == "daemon":
    # A daemon thread still running prepared ops while the interpreter exits.
    big = arr((256, 4096))
    busy = ort.prepare_softmax(arr((256, 4096)), big, dim=1, backend=backend)
    started = threading.Event()

    def spin():
        while True:
            busy.run()
            started.set()

    threading.Thread(target=spin, daemon=True).start()
    started.wait()
print("ok")
"""


@pytest.mark.parametrize("mode", ["plain", "daemon"])
def test_interpreter_exit_with_live_prepared_ops(target, mode):
    """A process that exits with PreparedOps never destroyed (in globals, cycles, a
    daemon thread still running one) exits cleanly: status 0, nothing on stderr. A
    double free would abort (or be reported by the ASan build)."""
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join(p for p in sys.path if p)
    result = subprocess.run(
        [sys.executable, "-c", _EXIT_SCRIPT, target.backend, target.lib.name, mode],
        capture_output=True, text=True, env=env, timeout=120)
    assert result.returncode == 0, result.stderr
    assert result.stdout.strip() == "ok"
    assert result.stderr == ""
