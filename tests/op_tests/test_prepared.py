"""PreparedOp: run, run_inputs with new data, checks on new arrays, destroy, `with`."""

import gc
import subprocess
import sys

import numpy as np
import pytest

import operator_runtime as ort
from operator_runtime_testing import assertions
from operator_runtime_testing.arrays import make_input, make_output
from operator_runtime_testing.assertions import assert_close


def _pair(target, seed, shape=(33, 65)):
    lib = target.lib
    rng = np.random.default_rng(seed)
    return lib.full_nan(shape, "f32"), lib.randn(rng, shape)


def test_run_and_run_inputs(target, seed):
    lib = target.lib
    out, src = _pair(target, seed)
    with ort.prepare_softmax(out, src, dim=1, backend=target.backend) as op:
        assert op.run() is out
        first = lib.to_f64(out)
        out2, src2 = _pair(target, seed + 1)
        assert op.run_inputs(out2, src2) is out2
        op.run()  # run() still uses the arrays given to prepare
        np.testing.assert_array_equal(lib.to_f64(out), first)
        assert not np.array_equal(lib.to_f64(out2), first)


def test_run_inputs_may_change_alignment(target, seed):
    """A descriptor depends on shapes and strides only: the same op runs on a view that
    starts one element into its buffer (no longer vector-aligned)."""
    lib, rng = target.lib, np.random.default_rng(seed)
    aligned = [make_input(rng, lib, (4099,), "f32") for _ in range(2)]
    out, _ = make_output(lib, (4099,), "f32")
    with ort.prepare_vector_add(out, *aligned, backend=target.backend) as op:
        op.run()
        shifted = [make_input(rng, lib, (4099,), "f32", "offset") for _ in range(2)]
        shifted_out, untouched = make_output(lib, (4099,), "f32", "offset")
        op.run_inputs(shifted_out, *shifted)
    lib.synchronize()
    expected = lib.to_f64(shifted[0]) + lib.to_f64(shifted[1])
    assert_close(lib.to_f64(shifted_out), expected, "f32")
    assert untouched()


def test_run_inputs_checks_new_arrays(target, seed):
    lib = target.lib
    out, src = _pair(target, seed)
    with ort.prepare_relu(out, src, backend=target.backend) as op:
        with pytest.raises(TypeError, match=r"takes 2 arrays \(out, src\), got 1"):
            op.run_inputs(out)
        with pytest.raises(ValueError, match=r"src has shape \(65, 33\)"):
            op.run_inputs(out, lib.empty((65, 33)))
        with pytest.raises(ValueError, match=r"src has shape \(33, 65\), strides \(1, 33\)"):
            op.run_inputs(out, lib.permute(lib.empty((65, 33)), (1, 0)))
        with pytest.raises(TypeError, match=r"out has dtype float16 but src has float32|"
                                            r"src has dtype float16 but out has float32"):
            op.run_inputs(out, lib.empty((33, 65), "f16"))
        with pytest.raises(TypeError, match=r"src is a builtins\.list"):
            op.run_inputs(out, [1.0])


def test_destroy_is_idempotent_and_final(target, seed):
    out, src = _pair(target, seed)
    op = ort.prepare_copy(out, src, backend=target.backend)
    op.run()
    op.destroy()
    op.destroy()
    with pytest.raises(ort.OperatorRuntimeError, match="destroyed"):
        op.run()
    with pytest.raises(ort.OperatorRuntimeError, match="destroyed"):
        op.run_inputs(out, src)
    assert "destroyed" in repr(op)


def test_keeps_its_arrays_alive(target, seed):
    lib = target.lib
    out, src = _pair(target, seed)
    expected = lib.to_f64(src).sum(axis=0)
    op = ort.prepare_reduce_sum(lib.empty((65,)), src, dim=0, backend=target.backend)
    del out, src
    gc.collect()
    assert_close(lib.to_f64(op.run()), expected, "f32", assertions.reduction("f32", 33, 33.0))
    op.destroy()


def test_attributes(target, seed):
    out, src = _pair(target, seed)
    with ort.prepare_softmax(out, src, backend=target.backend) as op:
        assert op.op == "softmax" and op.backend == target.resolved
        if target.resolved == "cpu":
            assert op.workspace_size == 0  # the CPU softmax keeps nothing between its passes
        assert "softmax" in repr(op) and "dim=1" in repr(op)


def test_kernel_name(target, seed):
    """Every operator names the kernel its plan picked (run_ops --mode bench prints it)."""
    out, src = _pair(target, seed)
    lib = target.lib
    ops = [ort.prepare_copy(out, src, backend=target.backend),
           ort.prepare_vector_add(out, src, src, backend=target.backend),
           ort.prepare_relu(out, src, backend=target.backend),
           ort.prepare_reduce_sum(lib.empty((33,)), src, dim=1, backend=target.backend),
           ort.prepare_softmax(out, src, backend=target.backend)]
    for op in ops:
        name = op.kernel_name
        assert isinstance(name, str) and name, op
        if target.resolved == "tilelang":  # a Python backend: its runner names the kernel
            assert name.startswith("tilelang."), name
        if target.resolved == "cpu":
            assert name.startswith("cpu."), name
        op.destroy()
        with pytest.raises(ort.OperatorRuntimeError, match="destroyed"):
            op.kernel_name


def test_garbage_collected_and_alive_at_exit():
    """Descriptors never destroyed explicitly are freed by __del__, also at interpreter exit."""
    code = ("import numpy as np, operator_runtime as ort\n"
            "x = np.ones((4, 4), np.float32)\n"
            "for _ in range(100): ort.prepare_softmax(np.empty_like(x), x, backend='cpu')\n"
            "kept = ort.prepare_copy(np.empty_like(x), x, backend='cpu')\n"
            "print('ok')\n")
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                            env=_env())
    assert result.returncode == 0 and result.stdout.strip() == "ok", result.stderr
    assert result.stderr == ""


def _env():
    import os

    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join([p for p in sys.path if p])
    return env
