"""The plan cache's fast path (operator_runtime/_fast_path.py): a one-shot call on numpy
arrays or torch tensors of a layout seen before runs the cached descriptor on the arrays'
data pointers. Checked here: every change of what the descriptor depends on (strides,
dtype, parameters, backend, variant, the output's layout, a new output or a given one)
misses; results are right after hits (random data, NaN-poisoned outputs, new buffers);
what describe() refuses is still refused once the layout is cached; the C checks of every
execute (overlap) still run on a hit; threads; the bound. Torch cases run on the CPU and,
where a GPU backend and torch's CUDA exist, on the GPU (else they skip, saying why).

Every test runs twice: through the compiled hit path (operator_runtime._fastcall, which
skips when the module was not built, saying why) and through the Python one alone (the
module's lookups switched off with _native.set_enabled, the test-only switch), as a
process without the module runs. test_native.py checks the compiled path's own parts."""

import threading

import numpy as np
import pytest

import operator_runtime as ort
from operator_runtime import _native, _plan_cache, _prepared
from operator_runtime_testing.threads import run_in_threads


@pytest.fixture(autouse=True, params=["compiled", "python"])
def hit_path(request):
    """The plan cache's hit path under test: compiled (C) or Python."""
    if request.param == "compiled" and _native.module is None:
        pytest.skip(f"no compiled hit path: {_native.reason}")
    _native.set_enabled(request.param == "compiled")
    yield request.param
    _native.set_enabled(True)


@pytest.fixture
def creates(monkeypatch):
    """The operators of the descriptors created from now on (a miss creates one)."""
    made = []
    real = _prepared._create_c
    monkeypatch.setattr(_prepared, "_create_c", lambda *a: made.append(a[1]) or real(*a))
    ort.clear_plan_cache()
    yield made
    ort.clear_plan_cache()


def _relu_ref(x, slope=0.0):
    x = np.asarray(x, dtype=np.float64)
    return np.where(x > 0, x, slope * x)


def _softmax_ref(x, dim):
    x = np.asarray(x, dtype=np.float64)
    e = np.exp(x - x.max(axis=dim, keepdims=True))
    return e / e.sum(axis=dim, keepdims=True)


def _poisoned(shape, dtype=np.float32):
    return np.full(shape, np.nan, dtype=dtype)


def test_numpy_hits_compute_on_new_buffers(creates, seed):
    rng = np.random.default_rng(seed)
    for _ in range(4):  # new input and output buffers of one layout: one descriptor
        x = rng.standard_normal((3, 17), dtype=np.float32)
        np.testing.assert_array_equal(ort.relu(x, 0.5, backend="cpu"), _relu_ref(x, 0.5))
        out = _poisoned((3, 17))
        assert ort.relu_(out, x, 0.5, backend="cpu") is out
        np.testing.assert_array_equal(out, _relu_ref(x, 0.5))
    # relu(x) allocates its output, relu_(out, x) takes one: two layouts of the call.
    assert creates == ["relu", "relu"]


def test_numpy_keys_change_with_what_the_descriptor_depends_on(creates, seed):
    rng = np.random.default_rng(seed)
    base = rng.standard_normal((6, 34), dtype=np.float32)
    x = base[:3, :17]  # (3, 17) with the strides of a (6, 34) array
    calls = [
        lambda: ort.relu(np.ascontiguousarray(x), 0.5, backend="cpu"),
        lambda: ort.relu(x, 0.5, backend="cpu"),  # another stride
        lambda: ort.relu(base[::2, ::2], 0.5, backend="cpu"),  # the same shape, other strides
        lambda: ort.relu(x.astype(np.float16), 0.5, backend="cpu"),  # another dtype
        lambda: ort.relu(x, 0.25, backend="cpu"),  # another parameter
        lambda: ort.relu(x, -0.0, backend="cpu"),  # 0.0 and -0.0: not the same slope
        lambda: ort.relu(x, 0.0, backend="cpu"),
        lambda: ort.relu(x, 0.5, backend="auto"),  # another backend name
        lambda: ort.relu(x, 0.5, backend="cpu", variant="auto"),  # a variant named
    ]
    for i, call in enumerate(calls):
        before = len(creates)
        got = call()
        assert len(creates) == before + 1, f"call {i} hit a descriptor of another layout"
        assert call() is not got and len(creates) == before + 1, f"call {i} missed again"


def test_numpy_output_layouts_and_softmax_dims(creates, seed):
    rng = np.random.default_rng(seed)
    x = rng.standard_normal((5, 9), dtype=np.float32)
    wide = _poisoned((5, 18))
    for out in (_poisoned((5, 9)), wide[:, ::2], _poisoned((9, 5)).T):
        ort.softmax_(out, x, 1, backend="cpu")
        np.testing.assert_allclose(out, _softmax_ref(x, 1), rtol=1e-5, atol=1e-6)
    assert np.isnan(wide[:, 1::2]).all()  # the strided output's gaps are untouched
    for dim in (0, 1, -1):
        np.testing.assert_allclose(ort.softmax(x, dim, backend="cpu"), _softmax_ref(x, dim),
                                   rtol=1e-5, atol=1e-6)
    # Three output layouts, then dims 0 and 1 (-1 is 1: the same descriptor).
    assert creates == ["softmax"] * 5
    assert ort.softmax(x, out=_poisoned((5, 9)), backend="cpu").shape == (5, 9)
    assert len(creates) == 5  # out= of the contiguous layout seen first


def test_numpy_read_only_arrays_after_a_hit(creates):
    x = np.linspace(-1, 1, 24, dtype=np.float32)
    ort.relu(x, backend="cpu")
    frozen = x.copy()
    frozen.setflags(write=False)  # exports no writable buffer: read another way
    np.testing.assert_array_equal(ort.relu(frozen, backend="cpu"), _relu_ref(x))
    out = np.empty_like(x)
    ort.relu_(out, x, backend="cpu")
    out.setflags(write=False)
    with pytest.raises(ValueError, match="read-only"):
        ort.relu_(out, x, backend="cpu")
    assert ort.relu_(np.empty_like(x), frozen, backend="cpu") is not None


def test_numpy_layouts_without_a_buffer(creates, seed):
    """Strided, empty and bfloat16 arrays: their pointers come from __array_interface__."""
    import ml_dtypes

    rng = np.random.default_rng(seed)
    x = rng.standard_normal((4, 10), dtype=np.float32)
    for _ in range(2):
        np.testing.assert_array_equal(ort.relu(x[:, ::3], backend="cpu"), _relu_ref(x[:, ::3]))
        assert ort.relu(np.empty((0, 3), np.float32), backend="cpu").shape == (0, 3)
        b = x.astype(ml_dtypes.bfloat16)
        np.testing.assert_array_equal(ort.relu(b, backend="cpu").astype(np.float64), _relu_ref(b))


def test_overlap_is_checked_on_a_hit(creates):
    buf = np.zeros(32, np.float32)
    ort.softmax_(buf[:8], buf[16:24], backend="cpu")
    assert creates == ["softmax"]
    with pytest.raises(ValueError, match="overlap"):
        ort.softmax_(buf[:8], buf[4:12], backend="cpu")  # the cached layout, overlapping
    ort.softmax_(buf[:8], buf[16:24], backend="cpu")  # the entry survives the error
    assert creates == ["softmax"]


def test_mixed_array_libraries_are_refused_after_a_hit(creates):
    torch = pytest.importorskip("torch", reason="torch is not installed")
    x = np.ones(8, np.float32)
    ort.relu_(np.empty_like(x), x, backend="cpu")
    with pytest.raises(TypeError, match="torch tensor"):
        ort.relu_(np.empty_like(x), torch.ones(8), backend="cpu")


def _torch_device(torch, name):
    if name == "cuda":
        if not torch.cuda.is_available():
            pytest.skip("torch has no CUDA device here")
        if not {"nvidia", "metax"} & set(ort.available_backends()):
            pytest.skip(f"{ort.library_path()} has no GPU backend with a device")
    return torch.device(name)


@pytest.mark.parametrize("device_name", ["cpu", "cuda"])
def test_torch_hits_and_keys(device_name, creates, seed):
    torch = pytest.importorskip("torch", reason="torch is not installed")
    device = _torch_device(torch, device_name)
    g = torch.Generator().manual_seed(seed % 2**63)
    x = torch.randn(4, 33, generator=g).to(device)
    want = torch.where(x > 0, x, 0.5 * x)
    for _ in range(3):
        torch.testing.assert_close(ort.relu(x, 0.5), want, rtol=0, atol=0)
        out = torch.full_like(x, float("nan"))
        assert ort.relu_(out, x, 0.5) is out
        torch.testing.assert_close(out, want, rtol=0, atol=0)
    assert creates == ["relu", "relu"]
    assert ort.relu(x.t(), 0.5).stride() == (4, 1)  # a new output is contiguous
    torch.testing.assert_close(ort.relu(x.half(), 0.5), want.half(), rtol=0, atol=0)
    torch.testing.assert_close(ort.relu(x[:, ::2], 0.5), want[:, ::2], rtol=0, atol=0)
    assert creates == ["relu"] * 5  # transposed, float16, strided: three more layouts
    # New outputs on hits are contiguous too, whatever the input's strides (a transposed
    # input; a size-1 dim with a stride no contiguous tensor has), and compute right.
    odd = x[:1].as_strided((1, 33), (100, 1))
    for src in (x.t(), x.t(), odd, odd):
        new = ort.relu(src, 0.5)
        assert new.stride() == (src.shape[1], 1)
        torch.testing.assert_close(new, torch.where(src > 0, src, 0.5 * src), rtol=0, atol=0)
    assert creates == ["relu"] * 6  # the size-1 dim's stride: one more layout
    # The negative bit: resolved (never read raw), whatever was cached for plain tensors.
    torch.testing.assert_close(ort.relu(torch._neg_view(x), 0.5),
                               torch.where(-x > 0, -x, -0.5 * x), rtol=0, atol=0)
    # An output that requires grad is refused, though its layout is cached.
    with pytest.raises(ValueError, match="requires grad"):
        ort.relu_(torch.empty_like(x).requires_grad_(), x, 0.5)
    with pytest.raises(ValueError, match="negative bit"):
        ort.relu_(torch._neg_view(torch.empty_like(x)), x, 0.5)
    # A tensor subclass (nn.Parameter) as an input: computed, not confused with a Tensor's key.
    param = torch.nn.Parameter(x.clone(), requires_grad=False)
    torch.testing.assert_close(ort.relu(param, 0.5), want, rtol=0, atol=0)


@pytest.mark.parametrize("device_name", ["cpu", "cuda"])
def test_torch_sparse_tensors_are_refused_after_a_hit(device_name, creates):
    torch = pytest.importorskip("torch", reason="torch is not installed")
    device = _torch_device(torch, device_name)
    x = torch.eye(3, device=device)
    ort.relu(x)
    with pytest.raises(TypeError, match="strided"):
        ort.relu(x.to_sparse())


def test_threads_share_and_evict_entries_safely(seed):
    """Threads calling on a few layouts (one entry used by one call at a time, others make
    their own) and on many (evictions while entries run), with clears meanwhile."""
    ort.clear_plan_cache()
    rng = np.random.default_rng(seed)
    xs = [rng.standard_normal(n, dtype=np.float32) for n in range(1, 2 * _plan_cache.CAPACITY)]

    def work(offset, few):
        for i in range(400):
            x = xs[(i + offset) % (3 if few else len(xs))]
            out = _poisoned(x.shape)
            ort.relu_(out, x, 0.5, backend="cpu")
            np.testing.assert_array_equal(out, _relu_ref(x, 0.5))
            if i % 97 == offset:
                ort.clear_plan_cache()

    errors = run_in_threads(work, ((k, k % 2 == 0) for k in range(6)))
    assert not errors, errors[0]
    assert _plan_cache.size() <= _plan_cache.CAPACITY
    ort.clear_plan_cache()


def test_a_layout_in_use_stays_cached(creates):
    """Eviction spares an entry used since the last sweep (CLOCK): a hot layout among
    many cold ones keeps its descriptor."""
    hot = np.ones(5, np.float32)
    ort.relu(hot, backend="cpu")
    for n in range(6, 6 + 3 * _plan_cache.CAPACITY):
        ort.relu(np.ones(n, np.float32), backend="cpu")
        ort.relu(hot, backend="cpu")
    assert creates.count("relu") == 1 + 3 * _plan_cache.CAPACITY  # hot: created once
    assert _plan_cache.size() == _plan_cache.CAPACITY


def test_an_error_on_a_hit_leaves_the_entry_usable(creates, monkeypatch, hit_path):
    """An exception between taking an entry and running it (here: allocating the new
    output) gives the entry back: later calls hit it, and clearing does not wait forever."""
    if hit_path == "compiled":
        pytest.skip("the compiled path allocates with numpy.empty itself (test_native.py "
                    "checks its errors)")
    x = np.linspace(-1, 1, 12, dtype=np.float32)
    ort.relu(x, backend="cpu")
    (entry,) = _plan_cache._entries.values()

    def no_memory(src):
        raise MemoryError("no memory for the output")

    with monkeypatch.context() as m:
        m.setattr(entry, "new", no_memory)  # the entry's allocator of new outputs
        with pytest.raises(MemoryError):
            ort.relu(x, backend="cpu")
    np.testing.assert_array_equal(ort.relu(x, backend="cpu"), _relu_ref(x))
    assert creates == ["relu"]
    done = threading.Event()
    threading.Thread(target=lambda: (ort.clear_plan_cache(), done.set()), daemon=True).start()
    assert done.wait(30), "clear_plan_cache() waited for an entry nobody holds"


def test_torch_cuda_streams_get_their_own_plans(creates):
    """The current CUDA stream is part of the key (the call is queued on it, and a plan's
    workspace was allocated on it): a call under torch.cuda.stream(s) makes its own plan,
    and each computes right."""
    torch = pytest.importorskip("torch", reason="torch is not installed")
    device = _torch_device(torch, "cuda")
    x = torch.randn(3, 1000, device=device)
    want = torch.softmax(x, dim=1)
    torch.testing.assert_close(ort.softmax(x), want)
    side = torch.cuda.Stream(device)
    side.wait_stream(torch.cuda.current_stream(device))
    with torch.cuda.stream(side):
        for _ in range(2):
            got = ort.softmax(x)
    side.synchronize()
    torch.testing.assert_close(got, want)
    torch.testing.assert_close(ort.softmax(x), want)
    assert creates == ["softmax", "softmax"]


def test_an_unhashable_array_like_gets_the_slow_path_error(creates):
    class Odd:  # numpy-like attributes, a list for a shape
        dtype, shape, strides = np.dtype(np.float32), [8], [4]

    with pytest.raises(TypeError, match="src is a"):
        ort.relu_(np.empty(8, np.float32), Odd(), backend="cpu")


def test_the_cache_keeps_no_array_alive(creates, seed):
    """A cached plan holds no array of the calls that made or hit it: given outputs, new
    ones and inputs are freed once the caller lets them go."""
    import gc
    import weakref

    rng = np.random.default_rng(seed)
    refs = []
    for _ in range(2):  # a miss (creates the plan), then a hit
        x = rng.standard_normal((5, 7), dtype=np.float32)
        out = _poisoned(x.shape)
        ort.softmax_(out, x, backend="cpu")
        new = ort.relu(x, backend="cpu")
        refs += [weakref.ref(a) for a in (x, out, new)]
        del x, out, new
    gc.collect()
    assert creates == ["softmax", "relu"]
    assert all(r() is None for r in refs), "an array outlived its call"
