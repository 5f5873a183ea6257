"""tests/run_ops.py --shape: how each op reads a shape (matmul: M x K x N), matched against the
bench set by every operand, and run end to end on the CPU in both modes."""

import subprocess
import sys
from pathlib import Path

import pytest

import run_ops
from operator_runtime_testing import backends

REPO = Path(__file__).resolve().parents[1]


def test_each_op_reads_a_shape():
    assert run_ops.shape_inputs("softmax", (3, 4)) == ((3, 4),)
    assert run_ops.shape_inputs("vector_add", (5,)) == ((5,), (5,))
    assert run_ops.shape_inputs("matmul", (3, 4, 5)) == ((3, 4), (4, 5))
    assert run_ops.shape_inputs("matmul", (6, 7)) == ((6, 7), (7, 7))
    with pytest.raises(ValueError, match="M x K x N"):
        run_ops.shape_inputs("matmul", (8,))
    # --op all: matmul takes the shapes it reads, the others every one
    assert run_ops.op_shapes("matmul", [(8,), (2, 3), (2, 3, 4)]) == [(2, 3), (2, 3, 4)]
    assert run_ops.op_shapes("relu", [(8,), (2, 3)]) == [(8,), (2, 3)]


def run(*args):
    cmd = [sys.executable, str(REPO / "tests" / "run_ops.py"), "--backend", "cpu", *args]
    return subprocess.run(cmd, capture_output=True, text=True)


def test_matmul_shapes_end_to_end():
    target = backends.select("cpu")
    if target.skip_reason:
        pytest.skip(target.skip_reason)
    p = run("--op", "matmul", "--shape", "7x9x5,6x3", "--dtype", "f32")
    assert p.returncode == 0, p.stdout + p.stderr
    assert "7x9x5" in p.stdout and "6x3" in p.stdout and "test: 2 passed, 0 failed" in p.stdout
    # A bench case's own name picks that case (its operands (64, 1024) and (1024, 1024)).
    p = run("--op", "matmul", "--mode", "bench", "--shape", "64x1024x1024", "--peers", "none",
            "--repeats", "1", "--rotate-mib", "0")
    assert p.returncode == 0, p.stdout + p.stderr
    assert "64x1024x1024" in p.stdout and "1 cases, 0 failed" in p.stdout
    p = run("--op", "matmul", "--shape", "4096")
    assert p.returncode == 2 and "--shape 4096: matmul reads a --shape as M x K x N" in p.stderr
    assert "Traceback" not in p.stderr
