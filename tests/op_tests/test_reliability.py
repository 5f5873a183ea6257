"""Reliability of the binding: fork children, disjoint views, misuse (CPU, numpy arrays)."""

import multiprocessing

import numpy as np
import pytest

import operator_runtime as ort

# Above the library's parallel threshold (2^15 elements): the parent's CPU thread pool starts.
BIG = (256, 512)


def _run_every_op():
    x = np.linspace(-1.0, 1.0, BIG[0] * BIG[1], dtype=np.float32).reshape(BIG)
    y = np.empty_like(x)
    ort.copy_(y, x, backend="cpu")
    assert np.array_equal(y, x)
    ort.vector_add_(y, x, x, backend="cpu")
    assert np.array_equal(y, x + x)
    ort.relu_(y, x, 0.5, backend="cpu")
    assert np.array_equal(y, np.where(x > 0, x, np.float32(0.5) * x))
    ort.silu_(y, x, backend="cpu")
    np.testing.assert_allclose(y, x / (1 + np.exp(-x)), rtol=1e-5, atol=1e-6)
    ort.softmax_(y, x, dim=-1, backend="cpu")
    np.testing.assert_allclose(y.sum(axis=-1), 1.0, rtol=1e-5)
    s = ort.reduce_sum(x, dim=1, backend="cpu")
    np.testing.assert_allclose(s, x.sum(axis=1, dtype=np.float64), rtol=1e-5, atol=1e-4)
    long_row = np.full((1, 1 << 17), 0.5, dtype=np.float32)  # reduce_sum splits it across threads
    assert ort.reduce_sum(long_row, dim=1, backend="cpu")[0] == 0.5 * (1 << 17)
    return True


def _child(queue):
    try:
        queue.put(_run_every_op())
    except BaseException as e:  # reported to the parent
        queue.put(repr(e))


def test_fork_child_runs_every_op_after_parent_used_threads():
    _run_every_op()  # the parent's thread pool is up
    ctx = multiprocessing.get_context("fork")
    queue = ctx.Queue()
    proc = ctx.Process(target=_child, args=(queue,))
    proc.start()
    proc.join(timeout=60)
    if proc.is_alive():
        proc.kill()
        proc.join()
        pytest.fail("the forked child did not finish within 60 s (hung in a parallel region?)")
    assert proc.exitcode == 0
    assert queue.get(timeout=5) is True
    _run_every_op()  # the parent still runs


def test_fork_pool_map():
    _run_every_op()
    with multiprocessing.get_context("fork").Pool(2) as pool:
        result = pool.map_async(_reduce_in_child, range(4))
        assert result.get(timeout=60) == [float(BIG[0] * BIG[1]) * (i + 1) for i in range(4)]


def _reduce_in_child(i):
    x = np.full(BIG, float(i + 1), dtype=np.float32)
    return float(ort.reduce_sum(x, dim=None, backend="cpu"))


# ---- One fault, one answer --------------------------------------------------------

@pytest.mark.parametrize("dim", [True, False, np.bool_(True)])
def test_bool_dim_is_refused(dim):
    x = np.ones((2, 3), dtype=np.float32)
    with pytest.raises(TypeError, match="dim must be an int"):
        ort.reduce_sum(x, dim, backend="cpu")
    with pytest.raises(TypeError, match="dim must be an int"):
        ort.softmax(x, dim, backend="cpu")


@pytest.mark.parametrize("slope", [1e300, -1e39, float("inf"), float("-inf"), float("nan")])
def test_slope_not_a_finite_float32_is_refused(slope):
    x = np.ones(4, dtype=np.float32)
    with pytest.raises(ValueError, match="negative_slope"):
        ort.relu(x, slope, backend="cpu")
    with pytest.raises(ValueError, match="negative_slope"):
        ort.relu_(x, x, slope, backend="cpu")


def test_largest_float32_slope_is_accepted():
    x = -np.ones(4, dtype=np.float32)
    big = float(np.finfo(np.float32).max)
    assert np.array_equal(ort.relu(x, big, backend="cpu"), np.full(4, -big, dtype=np.float32))


def test_masked_arrays_are_refused():
    x = np.ma.masked_array(np.arange(4, dtype=np.float32), mask=[0, 1, 0, 0])
    plain = np.zeros(4, dtype=np.float32)
    with pytest.raises(TypeError, match="masked array"):
        ort.relu(x, backend="cpu")
    with pytest.raises(TypeError, match="masked array"):
        ort.copy_(x, plain, backend="cpu")
    with pytest.raises(TypeError, match="masked array"):
        ort.copy_(plain, x, backend="cpu")


# ---- Disjoint views ---------------------------------------------------------------

def test_disjoint_views_run():
    a = np.arange(32, dtype=np.float32).reshape(4, 8)
    b = a.copy()
    ort.copy_(b[:, 0], b[:, 1], backend="cpu")
    assert np.array_equal(b[:, 0], a[:, 1]) and np.array_equal(b[:, 1:], a[:, 1:])
    b = a - 16
    want = np.where(b[:, 4:] > 0, b[:, 4:], 0)
    ort.relu_(b[:, :4], b[:, 4:], backend="cpu")
    assert np.array_equal(b[:, :4], want)
    b = a.copy()
    ort.softmax_(b[:, :4], b[:, 4:], backend="cpu")
    e = np.exp(a[:, 4:] - a[:, 4:].max(axis=1, keepdims=True))
    np.testing.assert_allclose(b[:, :4], e / e.sum(axis=1, keepdims=True), rtol=1e-6)
    buf = np.arange(16, dtype=np.float32)
    ort.copy_(buf[::2], buf[1::2], backend="cpu")
    assert np.array_equal(buf, np.repeat(np.arange(1, 16, 2, dtype=np.float32), 2))


def test_true_overlaps_are_refused():
    a = np.arange(32, dtype=np.float32).reshape(4, 8)
    with pytest.raises(ort.InvalidArgumentError, match="overlaps"):
        ort.copy_(a[:, 1:5], a[:, :4], backend="cpu")
    with pytest.raises(ort.InvalidArgumentError, match="overlaps"):
        ort.softmax_(a, a, backend="cpu")
    with pytest.raises(ort.InvalidArgumentError, match="overlaps"):
        ort.copy_(a[:, :4], a[:, :4].T, backend="cpu")
    ort.relu_(a, a, backend="cpu")  # exact in place: allowed


def test_disjoint_views_run_on_the_target(target):
    """The same disjoint views on the --backend target (torch tensors on a GPU)."""
    L, b = target.lib, target.backend
    a = np.arange(32, dtype=np.float32).reshape(4, 8)
    x = L.from_numpy(a, "f32")
    ort.copy_(x[:, 0], x[:, 1], backend=b)
    want = a.copy()
    want[:, 0] = a[:, 1]
    np.testing.assert_array_equal(L.to_f64(x), want)
    x = L.from_numpy(a - 16, "f32")
    ort.relu_(x[:, :4], x[:, 4:], 0.5, backend=b)
    want = a - 16
    want[:, :4] = np.where(want[:, 4:] > 0, want[:, 4:], 0.5 * want[:, 4:])
    np.testing.assert_array_equal(L.to_f64(x), want)
    x = L.from_numpy(a, "f32")
    ort.softmax_(x[:, :4], x[:, 4:], dim=-1, backend=b)
    e = np.exp(a[:, 4:] - a[:, 4:].max(axis=1, keepdims=True))
    np.testing.assert_allclose(L.to_f64(x)[:, :4], e / e.sum(axis=1, keepdims=True), rtol=1e-6)
    np.testing.assert_array_equal(L.to_f64(x)[:, 4:], a[:, 4:])
    buf = L.from_numpy(np.arange(16, dtype=np.float32), "f32")
    ort.copy_(buf[::2], buf[1::2], backend=b)
    np.testing.assert_array_equal(L.to_f64(buf), np.repeat(np.arange(1, 16, 2), 2))
    big = L.from_numpy(np.arange(2 * 4096 * 64, dtype=np.float32).reshape(4096, 128), "f32")
    ort.vector_add_(big[:, :64], big[:, 64:], big[:, 64:], backend=b)
    host = np.arange(2 * 4096 * 64, dtype=np.float64).reshape(4096, 128)
    np.testing.assert_array_equal(L.to_f64(big)[:, :64], 2 * host[:, 64:])
    with pytest.raises(ort.InvalidArgumentError, match="overlaps"):
        ort.copy_(x[:, 1:5], x[:, :4], backend=b)
