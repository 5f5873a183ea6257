"""The compiled hit path of one-shot calls (operator_runtime._fastcall, _native.py): its keys
(every change of what the descriptor depends on misses in C), results after hits in C
(random data against a float64 reference, NaN-poisoned outputs, odd sizes, every layout
kind: strided, broadcast, transposed, new outputs), errors (the same exception as the
Python path), its lock, threads, fork, and a process without the module (the ctypes path,
said by fast_call_info()), and prepared ops' runs on host arrays through their own Slot.
test_plan_cache.py runs the plan cache's own tests through both
paths. Tests that need the module skip without it, saying why."""

import gc
import os
import subprocess
import sys
import threading
from pathlib import Path

import numpy as np
import pytest

import operator_runtime as ort
from operator_runtime import _native, _plan_cache
from operator_runtime.errors import OperatorRuntimeError
from operator_runtime_testing.threads import run_in_threads

compiled = pytest.mark.skipif(_native.module is None,
                              reason=f"no compiled hit path: {_native.reason}")


@pytest.fixture(autouse=True)
def fresh_cache():
    _native.set_enabled(True)
    yield
    _native.set_enabled(True)


def _poisoned(shape, dtype=np.float32):
    return np.full(shape, np.nan, dtype=dtype)


def _f64(x):
    return np.asarray(x, dtype=np.float64)


def _relu_ref(x, slope=0.0):
    x = _f64(x)
    return np.where(x > 0, x, slope * x)


def _softmax_ref(x, dim):
    x = _f64(x)
    e = np.exp(x - x.max(axis=dim, keepdims=True))
    return e / e.sum(axis=dim, keepdims=True)


def _silu_ref(x):
    x = _f64(x)
    return x / (1 + np.exp(-x))


def _hits(op, out, *inputs, param=None, backend="cpu", variant=None):
    """Whether a call with these arguments would hit in C now (call() runs it: the arrays
    must be valid arguments)."""
    return _native.op(op).call(out, *inputs, param, backend, variant) is not None


def test_fast_call_info_says_which_path():
    info = ort.fast_call_info()
    assert set(info) == {"compiled", "path", "reason"}
    if info["compiled"]:
        assert info["reason"] is None and Path(info["path"]).is_file()
    else:
        assert info["path"] is None and info["reason"]


def test_without_the_module_calls_take_the_ctypes_path(tmp_path):
    """A process where the module cannot be imported (here: blocked in sys.modules, the
    test-only way to hide it) says so, and computes the same."""
    code = (
        "import sys\n"
        "sys.modules['operator_runtime._fastcall'] = None\n"
        "import numpy as np, operator_runtime as ort\n"
        "from operator_runtime import _native, _plan_cache\n"
        "info = ort.fast_call_info()\n"
        "assert not info['compiled'] and 'blocked' in info['reason'], info\n"
        "assert _native.op('relu') is None\n"
        "x = np.linspace(-1, 1, 9, dtype=np.float32)\n"
        "for _ in range(3):\n"
        "    assert np.array_equal(ort.relu(x, 0.5, backend='cpu'), np.where(x > 0, x, 0.5 * x))\n"
        "assert _plan_cache.size() == 1\n"
        "print('ok')\n")
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join(p for p in sys.path if p)
    done = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True,
                          timeout=120)
    assert done.returncode == 0 and done.stdout.strip() == "ok", done.stderr


@compiled
def test_keys_miss_on_every_change(seed):
    """A key registered by one call; each change of what the descriptor depends on misses
    in C (and the Python path then registers it, so it hits next time)."""
    ort.clear_plan_cache()
    rng = np.random.default_rng(seed)
    base = rng.standard_normal((6, 34), dtype=np.float32)
    x = base[:3, :17]  # strided
    out = _poisoned((3, 17))
    ort.relu_(out, x, 0.5, backend="cpu")
    assert _hits("relu", out, x, param=0.5)
    assert _hits("relu", _poisoned((3, 17)), base[3:, 17:], param=0.5)  # new buffers
    changes = {
        "input strides": (out, np.ascontiguousarray(x), 0.5, "cpu", None),
        "output strides": (_poisoned((3, 34))[:, :17], x, 0.5, "cpu", None),
        "shape": (_poisoned((3, 16)), x[:, :16], 0.5, "cpu", None),
        "dtype": (_poisoned((3, 17), np.float16), x.astype(np.float16), 0.5, "cpu", None),
        "parameter": (out, x, 0.25, "cpu", None),
        "-0.0 for 0.0": (out, x, -0.0, "cpu", None),
        "an int parameter": (out, x, 1, "cpu", None),
        "backend": (out, x, 0.5, "auto", None),
        "variant": (out, x, 0.5, "cpu", "auto"),
        "a new output": (None, x, 0.5, "cpu", None),
    }
    for what, (o, src, slope, backend, variant) in changes.items():
        assert not _hits("relu", o, src, param=slope, backend=backend, variant=variant), what
        got = ort.relu_(o, src, slope, backend=backend, variant=variant) if o is not None \
            else ort.relu(src, slope, backend=backend, variant=variant)
        np.testing.assert_array_equal(got, _relu_ref(src, slope), err_msg=what)
        if o is not None:
            o[...] = np.nan
        assert _hits("relu", o, src, param=slope, backend=backend, variant=variant), what
        got = ort.relu_(o, src, slope, backend=backend, variant=variant) if o is not None \
            else ort.relu(src, slope, backend=backend, variant=variant)
        np.testing.assert_array_equal(got, _relu_ref(src, slope), err_msg=what)
    ort.clear_plan_cache()


@compiled
def test_what_the_python_path_refuses_never_hits():
    """A read-only output, an ndarray subclass, a bool or numpy scalar parameter, bfloat16
    (no buffer format), mixed array libraries: never a C hit; the Python path answers."""
    ort.clear_plan_cache()
    x = np.linspace(-1, 1, 8, dtype=np.float32)
    out = np.empty(8, np.float32)
    ort.relu_(out, x, backend="cpu")
    assert _hits("relu", out, x, param=0.0)
    read_only = np.empty(8, np.float32)
    read_only.flags.writeable = False
    assert not _hits("relu", read_only, x, param=0.0)
    with pytest.raises(ValueError, match="read-only"):
        ort.relu_(read_only, x, backend="cpu")
    sub = x.view(np.ma.MaskedArray)
    assert not _hits("relu", out, sub, param=0.0)
    assert not _hits("relu", out, x, param=np.float32(0.0))
    assert not _hits("softmax", out, x, param=True)
    with pytest.raises(TypeError):
        ort.softmax_(out, x, True, backend="cpu")
    ml_dtypes = pytest.importorskip("ml_dtypes")
    xb = x.astype(ml_dtypes.bfloat16)
    ob = np.empty(8, ml_dtypes.bfloat16)
    for _ in range(2):
        ort.relu_(ob, xb, backend="cpu")
        assert not _hits("relu", ob, xb, param=0.0)
        np.testing.assert_array_equal(_f64(ob), _relu_ref(_f64(xb)))
    ort.clear_plan_cache()


def _cases(rng):
    """(name, the call, the float64 reference, the C Op and its arguments) of every
    operator with the compiled path, new outputs and given ones, odd sizes and layouts."""
    x = rng.standard_normal((5, 13), dtype=np.float32)
    xt = rng.standard_normal((13, 5), dtype=np.float32).T  # transposed
    b = rng.standard_normal(13, dtype=np.float32)  # broadcast along rows
    m = rng.standard_normal((13, 7), dtype=np.float32)
    o = lambda shape=(5, 13): _poisoned(shape)  # noqa: E731
    return [
        ("relu", lambda: ort.relu(xt, 0.1, backend="cpu"), _relu_ref(xt, 0.1),
         ("relu", None, xt, 0.1)),
        ("relu_", lambda: ort.relu_(o(), x, backend="cpu"), _relu_ref(x),
         None),
        ("silu", lambda: ort.silu(x, backend="cpu"), _silu_ref(x), ("silu", None, x, None)),
        ("copy broadcast", lambda: ort.copy_(o(), b, backend="cpu"),
         np.broadcast_to(_f64(b), (5, 13)), None),
        ("copy", lambda: ort.copy(xt, backend="cpu"), _f64(xt), ("copy", None, xt, None)),
        ("softmax dim 0", lambda: ort.softmax(x, 0, backend="cpu"), _softmax_ref(x, 0),
         ("softmax", None, x, 0)),
        ("softmax dim -1", lambda: ort.softmax(xt, backend="cpu"), _softmax_ref(xt, 1),
         ("softmax", None, xt, -1)),
        ("vector_add broadcast", lambda: ort.vector_add(x, b, backend="cpu"),
         _f64(x) + _f64(b), ("vector_add", None, x, b, None)),
        ("vector_add_", lambda: ort.vector_add_(o(), xt, x, backend="cpu"),
         _f64(xt) + _f64(x), None),
        ("matmul", lambda: ort.matmul(x, m, backend="cpu"), _f64(x) @ _f64(m),
         ("matmul", None, x, m, None)),
        ("matmul_", lambda: ort.matmul_(o((5, 7)), xt, m, backend="cpu"),
         _f64(xt) @ _f64(m), None),
    ]


@compiled
def test_results_after_hits_in_c(seed):
    ort.clear_plan_cache()
    rng = np.random.default_rng(seed)
    for name, call, want, probe in _cases(rng):
        for _ in range(3):  # a miss (registers), then hits
            got = call()
            np.testing.assert_allclose(_f64(got), want, rtol=2e-5, atol=2e-6, err_msg=name)
        if probe is not None:  # a new output: the next call is a C hit
            op, out, *args, param = probe
            got = _native.op(op).call(out, *args, param, "cpu", None)
            assert got is not None, name
            np.testing.assert_allclose(_f64(got), want, rtol=2e-5, atol=2e-6, err_msg=name)
    sizes = sum(fast.size() for fast in _native._ops.values())
    assert 0 < sizes <= len(_cases(rng))
    ort.clear_plan_cache()
    assert sum(fast.size() for fast in _native._ops.values()) == 0  # destroyed: unregistered


def _overlap_error(enabled):
    _native.set_enabled(enabled)
    buf = np.random.default_rng(0).standard_normal((2, 4, 9), dtype=np.float32)
    ort.softmax_(buf[0], buf[1], backend="cpu")  # caches the layout
    if enabled:
        assert _hits("softmax", buf[0], buf[1], param=-1)
    with pytest.raises(OperatorRuntimeError) as info:
        ort.softmax_(buf[0], buf[0], backend="cpu")  # the same layout, overlapping: execute fails
    return info.value


@compiled
def test_an_error_status_raises_as_the_python_path_does():
    c_error, py_error = _overlap_error(True), _overlap_error(False)
    assert type(c_error) is type(py_error) and str(c_error) == str(py_error)
    _native.set_enabled(True)
    buf = np.ones((2, 4, 9), np.float32)
    ort.softmax_(buf[0], buf[1], backend="cpu")
    np.testing.assert_allclose(buf[0], 1 / 9, rtol=1e-6)  # the entry is usable after the error
    done = threading.Event()
    threading.Thread(target=lambda: (ort.clear_plan_cache(), done.set()), daemon=True).start()
    assert done.wait(30), "clear_plan_cache() waited for an entry nobody holds"


def _prepared_cases(rng):
    """(name, PreparedOp on fresh numpy arrays, its output, the float64 reference) per
    operator: odd sizes, strided and broadcast inputs, NaN-poisoned outputs."""
    x = rng.standard_normal((37, 129), dtype=np.float32)
    y = rng.standard_normal((129,), dtype=np.float32)
    t = x.T  # strided
    cases = []

    def add(name, prepare, out, *arrays, want, **params):
        cases.append((name, prepare(out, *arrays, backend="cpu", **params), out, want))

    add("copy", ort.prepare_copy, _poisoned(t.shape), t, want=_f64(t))
    add("vector_add", ort.prepare_vector_add, _poisoned(x.shape), x, y, want=_f64(x) + _f64(y))
    add("relu", ort.prepare_relu, _poisoned(x.shape), x, negative_slope=0.25,
        want=_relu_ref(x, 0.25))
    add("silu", ort.prepare_silu, _poisoned(t.shape), t, want=_silu_ref(t))
    add("reduce_sum", ort.prepare_reduce_sum, _poisoned((37,)), x, dim=1,
        want=_f64(x).sum(axis=1))
    add("softmax", ort.prepare_softmax, _poisoned(t.shape), t, dim=0,
        want=_softmax_ref(t, 0))
    return cases


@compiled
def test_prepared_run_on_host_arrays_is_one_c_call(seed):
    """A PreparedOp on numpy arrays runs through its own Slot (one C call): right results,
    the same object returned, and after destroy() the Python path's error."""
    for name, op, out, want in _prepared_cases(np.random.default_rng(seed)):
        assert op._slot.run() is out, name  # ran in C (None: it could not)
        np.testing.assert_allclose(_f64(out), want, rtol=2e-5, atol=2e-6, err_msg=name)
        out[...] = np.nan
        assert op.run() is out, name
        np.testing.assert_allclose(_f64(out), want, rtol=2e-5, atol=2e-6, err_msg=name)
        op.destroy()
        assert op._slot is None, name
        with pytest.raises(OperatorRuntimeError, match="destroyed"):
            op.run()


@compiled
def test_prepared_run_error_raises_as_the_python_path_does():
    buf = np.ones((4, 9), np.float32)
    op = ort.prepare_softmax(buf, buf, backend="cpu")  # out is the input: execute refuses it
    with pytest.raises(OperatorRuntimeError) as in_c:
        op.run()
    assert op.run == op._slot.run  # run() is the Slot's: one C call
    with pytest.raises(OperatorRuntimeError) as in_python:
        op._run_python()  # the Python path
    assert type(in_c.value) is type(in_python.value) and str(in_c.value) == str(in_python.value)
    op.destroy()


@compiled
def test_threads_share_one_prepared_op_in_c(seed):
    """run() from 6 threads at once on one PreparedOp (a Slot in use: the Python path runs
    beside it): every result right; destroyed from another thread, it runs no more."""
    x = np.random.default_rng(seed).standard_normal((64, 1001), dtype=np.float32)
    out = _poisoned(x.shape)
    op = ort.prepare_softmax(out, x, dim=1, backend="cpu")
    want = _softmax_ref(x, 1)

    def work(k):
        for _ in range(200):
            assert op.run() is out
        np.testing.assert_allclose(_f64(out), want, rtol=2e-5, atol=2e-6)

    errors = run_in_threads(work, ((k,) for k in range(6)))
    assert not errors, errors[0]
    destroyer = threading.Thread(target=op.destroy)
    destroyer.start()
    destroyer.join(30)
    with pytest.raises(OperatorRuntimeError, match="destroyed"):
        op.run()


@compiled
def test_a_kept_run_after_the_op():
    """run() is the Slot's own method: kept past destroy() it raises as the op's run does;
    kept past the op itself (deleted, collected) it raises too, and never reaches the freed
    descriptor."""
    x = np.arange(-8, 9, dtype=np.float32)
    op = ort.prepare_relu(_poisoned(x.shape), x, backend="cpu")
    run = op.run
    np.testing.assert_array_equal(run(), np.maximum(x, 0))
    op.destroy()
    with pytest.raises(OperatorRuntimeError, match="destroyed"):
        run()
    op = ort.prepare_relu(_poisoned(x.shape), x, backend="cpu")
    run = op.run
    del op
    gc.collect()
    with pytest.raises(OperatorRuntimeError, match="no longer exists"):
        run()


@compiled
def test_dropping_the_op_waits_for_a_run_in_progress():
    """A caller keeps op.run and another thread is inside it (in the C library) when the
    op's last reference goes: freeing the op waits for that run, which completes on a live
    descriptor with the right result (execute is a ctypes callback here, held until 0.2 s
    after the op is dropped)."""
    import ctypes
    import time

    x = np.linspace(-3, 3, 1001, dtype=np.float32)
    out = _poisoned(x.shape)
    op = ort.prepare_relu(out, x, backend="cpu")
    real, inside, results = op._c.execute, threading.Event(), []

    def execute(*args):
        inside.set()
        time.sleep(0.2)
        return real(*args)

    argtypes = [ctypes.c_void_p, ctypes.c_void_p, ctypes.c_size_t] + [ctypes.c_void_p] * 3
    callback = ctypes.CFUNCTYPE(ctypes.c_int, *argtypes)(execute)
    op._arm_slot(ctypes.cast(callback, ctypes.c_void_p).value)
    run = op.run
    runner = threading.Thread(target=lambda: results.append(run()))
    runner.start()
    assert inside.wait(10)
    started = time.perf_counter()
    del op  # its __del__ takes the Slot: it waits for the run in the other thread
    waited = time.perf_counter() - started
    runner.join(10)
    assert waited > 0.1, f"the op was freed {waited:.3f} s after the drop, during the run"
    assert len(results) == 1 and results[0] is out
    np.testing.assert_array_equal(out, np.maximum(x, 0))
    with pytest.raises(OperatorRuntimeError, match="no longer exists"):
        run()


@compiled
def test_slot_is_a_lock():
    slot = _native.module.Slot()
    assert slot.acquire(False) and slot.locked()
    assert not slot.acquire(False) and not slot.acquire(blocking=False)
    slot.release()
    with pytest.raises(RuntimeError):
        slot.release()
    with slot:
        assert slot.locked()
    assert not slot.locked()
    holder = threading.Event()
    slot.acquire()
    waiter = threading.Thread(target=lambda: (slot.acquire(), holder.set(), slot.release()))
    waiter.start()
    assert not holder.wait(0.05)  # waits for the release, the GIL free meanwhile
    slot.release()
    waiter.join(30)
    assert holder.is_set()


@compiled
def test_threads_hammer_one_shot_calls(seed):
    """Threads on a few layouts (an entry in use is a miss, the Python path makes its own)
    and on many (evictions), with clears, new outputs and given ones: every result right,
    the cache and the C tables bounded, and nothing left registered after a clear."""
    ort.clear_plan_cache()
    rng = np.random.default_rng(seed)
    xs = [rng.standard_normal(n, dtype=np.float32) for n in range(1, 2 * _plan_cache.CAPACITY)]

    def work(offset, few):
        for i in range(600):
            x = xs[(i + offset) % (3 if few else len(xs))]
            if i % 2:
                out = _poisoned(x.shape)
                ort.relu_(out, x, 0.5, backend="cpu")
            else:
                out = ort.relu(x, 0.5, backend="cpu")
            np.testing.assert_array_equal(out, _relu_ref(x, 0.5))
            if i % 151 == offset:
                ort.clear_plan_cache()

    errors = run_in_threads(work, ((k, k % 2 == 0) for k in range(6)))
    assert not errors, errors[0]
    assert _plan_cache.size() <= _plan_cache.CAPACITY
    assert _native.op("relu").size() <= _plan_cache.CAPACITY * 2
    ort.clear_plan_cache()
    assert _native.op("relu").size() == 0


@compiled
@pytest.mark.skipif(not hasattr(os, "fork"), reason="no os.fork on this platform")
def test_a_forked_child_starts_with_empty_tables():
    ort.clear_plan_cache()
    x = np.linspace(-1, 1, 11, dtype=np.float32)
    for _ in range(2):
        ort.relu(x, backend="cpu")
    assert _native.op("relu").size() == 1
    pid = os.fork()
    if pid == 0:  # the child: forgets the parent's plans, makes and hits its own
        code = 1
        try:
            ok = _native.op("relu").size() == 0 and _plan_cache.size() == 0
            for _ in range(3):
                ok = ok and np.array_equal(ort.relu(x, backend="cpu"), _relu_ref(x))
            ok = ok and _native.op("relu").size() == 1 and _hits("relu", None, x, param=0.0)
            code = 0 if ok else 1
        finally:
            os._exit(code)
    _, status = os.waitpid(pid, 0)
    assert os.waitstatus_to_exitcode(status) == 0
    assert _hits("relu", None, x, param=0.0)  # the parent's plan is untouched
    ort.clear_plan_cache()


def _torch_device(torch, name):
    if name == "cuda":
        if not torch.cuda.is_available():
            pytest.skip("torch has no CUDA device here")
        if not {"nvidia", "metax"} & set(ort.available_backends()):
            pytest.skip(f"{ort.library_path()} has no GPU backend with a device")
    return torch.device(name)


@pytest.fixture(params=["dlpack", "attributes"])
def torch_reader(request):
    """How the C path reads torch tensors: DLPack's C exchange table (recent torch, 2.11 has it:
    torch.Tensor.__dlpack_c_exchange_api__, what a hit uses where torch has it) or their
    attributes and methods (older torch); each test runs with both."""
    torch = pytest.importorskip("torch", reason="torch is not installed")
    from operator_runtime import _fast_path

    api = getattr(torch.Tensor, "__dlpack_c_exchange_api__", None)
    if request.param == "dlpack" and api is None:
        pytest.skip(f"torch {torch.__version__} has no DLPack exchange table")
    stream = _fast_path.kind_of(torch.empty(0)).current_stream  # binds torch as the package does
    assert _native.module.bind_torch(torch.Tensor, stream, api if request.param == "dlpack" else None) \
        == (request.param == "dlpack")
    ort.clear_plan_cache()
    yield request.param
    _native.module.bind_torch(torch.Tensor, stream, api)
    ort.clear_plan_cache()


@compiled
@pytest.mark.parametrize("device_name", ["cpu", "cuda"])
def test_torch_keys_and_results_in_c(device_name, torch_reader, seed):
    """Torch tensors through the C path: hits compute right (new outputs contiguous, on the
    tensor's device), and what the Python key leaves out misses: another dtype or stride, a
    subclass (nn.Parameter), the negative bit (resolved by the Python path), an output that
    requires grad (refused), another CUDA stream, a sparse tensor."""
    torch = pytest.importorskip("torch", reason="torch is not installed")
    device = _torch_device(torch, device_name)
    ort.clear_plan_cache()
    g = torch.Generator().manual_seed(seed % 2**63)
    x = torch.randn(5, 33, generator=g).to(device)
    xt = torch.randn(33, 5, generator=g).to(device).t()
    b = torch.randn(33, generator=g).to(device)
    for src in (x, xt):
        want = torch.where(src > 0, src, 0.5 * src)
        for _ in range(3):
            got = ort.relu(src, 0.5)
            torch.testing.assert_close(got, want, rtol=0, atol=0)
            assert got.is_contiguous() and got.device == src.device
            out = torch.full_like(x, float("nan"))
            assert ort.relu_(out, src, 0.5) is out
            torch.testing.assert_close(out, want, rtol=0, atol=0)
        assert _hits("relu", None, src, param=0.5, backend="auto")
        assert _hits("relu", torch.empty_like(x), src, param=0.5, backend="auto")
    for _ in range(3):
        torch.testing.assert_close(ort.vector_add(xt, b), xt + b)
        torch.testing.assert_close(ort.softmax(xt, 0), torch.softmax(xt, 0))
        torch.testing.assert_close(ort.matmul(xt, x.t()), xt @ x.t())
    for op, args, param in (("vector_add", (xt, b), None), ("softmax", (xt,), 0),
                            ("matmul", (xt, x.t()), None)):
        assert _hits(op, None, *args, param=param, backend="auto"), op
    assert not _hits("relu", None, x.half(), param=0.5, backend="auto")
    assert not _hits("relu", None, x[:, ::2], param=0.5, backend="auto")
    assert not _hits("relu", None, torch.nn.Parameter(x.clone()), param=0.5, backend="auto")
    neg = torch._neg_view(x)
    assert not _hits("relu", None, neg, param=0.5, backend="auto")
    torch.testing.assert_close(ort.relu(neg, 0.5), torch.where(-x > 0, -x, -0.5 * x))
    sparse = x.to_sparse()  # no strides: never a key; refused by the Python path each time
    for _ in range(2):
        assert not _hits("relu", None, sparse, param=0.5, backend="auto")
        with pytest.raises(TypeError, match="only strided tensors"):
            ort.relu(sparse, 0.5)
    grad_out = torch.empty_like(x).requires_grad_()
    assert not _hits("relu", grad_out, x, param=0.5, backend="auto")
    with pytest.raises(ValueError):
        ort.relu_(grad_out, x, 0.5)
    if device.type == "cuda":
        side = torch.cuda.Stream(device)
        side.wait_stream(torch.cuda.current_stream(device))
        with torch.cuda.stream(side):
            assert not _hits("relu", None, x, param=0.5, backend="auto")
            got = ort.relu(x, 0.5)
            assert _hits("relu", None, x, param=0.5, backend="auto")
        side.synchronize()
        torch.testing.assert_close(got, torch.where(x > 0, x, 0.5 * x))
    ort.clear_plan_cache()
