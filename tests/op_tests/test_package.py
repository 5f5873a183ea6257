"""The package around the operators: library loading, backends, errors, array types."""

import os
import subprocess
import sys
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import numpy as np
import pytest

import operator_runtime as ort
from operator_runtime import _backends


def test_library_and_backends():
    assert Path(ort.library_path()).is_file()
    assert "cpu" in ort.available_backends()


def test_missing_library_is_a_clear_error(tmp_path):
    code = "import operator_runtime as ort; ort.library_path()"
    env = dict(os.environ, CAMP_BUILD_DIR=str(tmp_path),
               PYTHONPATH=os.pathsep.join(p for p in sys.path if p))
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env)
    assert result.returncode != 0
    assert "libcamp_ops.so not found" in result.stderr and str(tmp_path) in result.stderr


def test_a_library_without_an_operator_names_how_to_rebuild_it(monkeypatch):
    from operator_runtime import _lib

    # An operator the manifest lists and the loaded library lacks (built before it was added).
    monkeypatch.setitem(_lib.OP_SIGNATURES, "no_such_op", _lib.OP_SIGNATURES["copy"])
    library = _lib.get()
    with pytest.raises(ort.OperatorRuntimeError, match="lacks the no_such_op operator") as info:
        library.op("no_such_op")
    assert str(library.path) in str(info.value)
    folder = Path(library.path).parent
    if _lib.in_source_tree() and folder.parent == _lib.REPO_ROOT and folder.name in _lib.DEFAULT_BUILD_DIRS:
        assert f"bash scripts/build_{folder.name[len('build-'):]}.sh build" in str(info.value)
    assert _lib.rebuild_hint("/elsewhere/libcamp_ops.so") == "rebuild the library"
    hint = _lib.rebuild_hint(_lib.REPO_ROOT / "build-nvidia" / "libcamp_ops.so")
    assert (("bash scripts/build_nvidia.sh build" in hint and "CAMP_BUILD_DIR" in hint)
            if _lib.in_source_tree() else hint == "rebuild the library")


def test_c_errors_are_value_errors_with_the_status():
    with pytest.raises(ort.InvalidArgumentError) as info:
        ort.copy_(np.empty(3, np.float32), np.empty(4, np.float32))
    assert isinstance(info.value, ValueError) and isinstance(info.value, RuntimeError)
    assert info.value.status == 1 and "OPRT_ERR_INVALID_ARG" in str(info.value)


def test_unavailable_gpu_backend_or_host_data():
    x = np.ones(3, np.float32)
    for gpu in ("nvidia", "metax"):
        if gpu in ort.available_backends():
            with pytest.raises(ValueError, match=f"backend '{gpu}' needs arrays in GPU memory"):
                ort.copy(x, backend=gpu)
        else:
            with pytest.raises(ort.OperatorRuntimeError, match=f"backend '{gpu}' is not available"):
                ort.copy(x, backend=gpu)


def test_why_a_gpu_backend_cannot_run(tmp_path):
    from operator_runtime_testing.backends import _gpu_skip_reason

    lib = tmp_path / "libcamp_ops.so"
    assert "no NVIDIA build loaded" in _gpu_skip_reason("nvidia", lib, ["cpu"])  # no CMakeCache
    (tmp_path / "CMakeCache.txt").write_text("CAMP_ENABLE_NVIDIA:BOOL=ON\nCAMP_ENABLE_METAX:BOOL=OFF\n")
    why = _gpu_skip_reason("nvidia", lib, ["cpu"])
    assert "no NVIDIA device visible" in why and "driver" in why and str(lib) in why
    assert "no MetaX build loaded" in _gpu_skip_reason("metax", lib, ["cpu"])


def test_python_backend_registry(monkeypatch):
    """A Python backend (TileLang, later) plugs in through register_backend."""
    calls = []

    def prepare(op, arrays, params):
        calls.append((op, params))
        assert op == "relu"

        def run(arrays):
            out, src = arrays
            np.copyto(out, np.where(src > 0, src, params["negative_slope"] * src))
        return run

    monkeypatch.setattr(_backends, "_registered", {})
    ort.register_backend("tilelang", prepare)
    x = np.array([-2.0, 3.0], np.float32)
    np.testing.assert_array_equal(ort.relu(x, 0.5, backend="tilelang"), [-1.0, 3.0])
    assert calls == [("relu", {"negative_slope": 0.5})]
    assert "tilelang" in ort.available_backends()
    with pytest.raises(ValueError, match="Python backends: tilelang"):
        ort.register_backend("cuda", prepare)


def test_threads_run_concurrently():
    """The current backend is per thread in C: every thread sets its own before creating."""
    rng = np.random.default_rng(0)
    xs = [rng.standard_normal((64, 257), dtype=np.float32) for _ in range(16)]
    with ThreadPoolExecutor(4) as pool:
        results = list(pool.map(lambda x: ort.softmax(x, backend="cpu"), xs))
    for x, y in zip(xs, results):
        e = np.exp(x - x.max(axis=1, keepdims=True))
        np.testing.assert_allclose(y, e / e.sum(axis=1, keepdims=True), rtol=1e-5, atol=1e-7)


def test_torch_cpu_tensors():
    torch = pytest.importorskip("torch")
    x = torch.randn(5, 7, dtype=torch.bfloat16).t()
    y = ort.relu(x, backend="cpu")
    assert isinstance(y, torch.Tensor) and y.dtype == torch.bfloat16 and y.shape == x.shape
    assert torch.equal(y, torch.relu(x))
    with pytest.raises(ValueError, match="requires grad"):
        ort.relu_(torch.zeros(3, requires_grad=True), torch.ones(3))
