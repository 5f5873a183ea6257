"""Several GPUs from Python: every operator on each visible GPU, two threads on two GPUs at
once, and torch's current device untouched by the calls. Skips (with the reason) without a
GPU backend, without torch, or with fewer than two GPUs where two are needed."""

import threading

import numpy as np
import pytest

import operator_runtime as ort


def _gpus():
    try:
        import torch
    except ImportError:
        pytest.skip("torch is not installed (the GPU tests allocate their arrays with torch)")
    if not any(b in ort.available_backends() for b in ("nvidia", "metax")):
        pytest.skip(f"no GPU backend available with {ort.library_path()}")
    if not torch.cuda.is_available():
        pytest.skip("torch sees no GPU")
    return torch, torch.cuda.device_count()


def _check_every_operator(torch, device, seed):
    """Runs the five operators on `device` and compares with numpy in float64."""
    g = np.random.default_rng(seed)
    x = g.standard_normal((37, 1029)).astype(np.float32)
    y = g.standard_normal((1029,)).astype(np.float32)
    tx, ty = torch.from_numpy(x).to(device), torch.from_numpy(y).to(device)
    x64, y64 = x.astype(np.float64), y.astype(np.float64)
    e = np.exp(x64 - x64.max(axis=1, keepdims=True))
    expected = {
        "copy": (ort.copy(tx), x64),
        "vector_add": (ort.vector_add(tx, ty), x64 + y64),
        "relu": (ort.relu(tx, negative_slope=0.25), np.where(x64 > 0, x64, 0.25 * x64)),
        "reduce_sum": (ort.reduce_sum(tx, dim=1), x64.sum(axis=1)),
        "softmax": (ort.softmax(tx, dim=1), e / e.sum(axis=1, keepdims=True)),
    }
    for op, (got, want) in expected.items():
        assert got.device == torch.device(device), f"{op}: result on {got.device}, not {device}"
        np.testing.assert_allclose(got.cpu().double().numpy(), want, rtol=1e-5, atol=1e-4,
                                   err_msg=f"{op} on {device}")


def test_every_operator_on_each_gpu_keeps_the_current_device():
    torch, count = _gpus()
    current = torch.cuda.current_device()
    for index in range(count):
        _check_every_operator(torch, f"cuda:{index}", seed=index)
        assert torch.cuda.current_device() == current


def test_two_threads_on_two_gpus_at_once():
    torch, count = _gpus()
    if count < 2:
        pytest.skip(f"needs two or more GPUs; {count} visible")
    errors = []

    def work(index):
        try:
            for round_ in range(3):
                _check_every_operator(torch, f"cuda:{index}", seed=10 * index + round_)
            torch.cuda.synchronize(index)
        except BaseException as exc:  # reported by the main thread
            errors.append(f"cuda:{index}: {exc!r}")

    threads = [threading.Thread(target=work, args=(i,)) for i in (0, count - 1)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert not errors, "\n".join(errors)


def test_tensors_of_two_gpus_in_one_call_are_refused():
    torch, count = _gpus()
    if count < 2:
        pytest.skip(f"needs two or more GPUs; {count} visible")
    a = torch.ones(1000, device="cuda:0")
    b = torch.ones(1000, device=f"cuda:{count - 1}")
    with pytest.raises(ValueError, match="is on cuda"):
        ort.vector_add(a, b)
