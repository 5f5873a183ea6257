"""reduce_sum accuracy on every path (dense, split, strided, broadcast, inner runs):
at least numpy's pairwise sum. Runs on the --backend target (the GPU paths on a GPU)."""

import numpy as np
import pytest

import operator_runtime as ort

N = 10**7
RTOL = 2e-7  # numpy's f32 pairwise sum of 10^7 x 0.1f is 8.5e-8 off


def _check(target, src, dim, exact):
    out = target.lib.to_f64(ort.reduce_sum(src, dim, backend=target.backend))
    np.testing.assert_allclose(out, exact, rtol=RTOL, atol=0)


def _f32(value):
    return float(np.float32(value))


@pytest.mark.parametrize("shape, dim", [
    ((N,), 0),            # one dense row (split across threads on the CPU)
    ((10, N // 10), 1),   # dense rows
    ((N // 4, 4), 0),     # inner runs of 4 outputs
    ((N // 2, 2), 0),     # a long axis, few outputs: the axis split across threads
    ((4, N // 4), 0),     # a short axis, many outputs
])
def test_constant_dense(target, shape, dim):
    src = target.lib.from_numpy(np.full(shape, 0.1, dtype=np.float32), "f32")
    exact = np.full(tuple(s for d, s in enumerate(shape) if d != dim), shape[dim] * _f32(0.1))
    _check(target, src, dim, exact)


def test_constant_strided_row(target):
    base = target.lib.from_numpy(np.full(2 * N, 0.1, dtype=np.float32), "f32")
    _check(target, base[::2], 0, N * _f32(0.1))


def test_constant_strided_rows(target):
    base = target.lib.from_numpy(np.full((N // 4, 4), 0.1, dtype=np.float32), "f32")
    src = target.lib.permute(base, (1, 0))  # rows of stride 4
    _check(target, src[:, ::2], 1, np.full(4, (N // 8) * _f32(0.1)))


@pytest.mark.parametrize("shape, dim", [((1, 2**27), 1), ((2**27,), 0), ((3, 2**25), 1)])
def test_broadcast_rows(target, shape, dim):
    one = target.lib.from_numpy(np.full((1,) * len(shape), 1e-3, dtype=np.float32), "f32")
    src = target.lib.broadcast_to(one, shape)
    exact = np.full(tuple(s for d, s in enumerate(shape) if d != dim), shape[dim] * _f32(1e-3))
    _check(target, src, dim, exact)


def test_broadcast_many_rows(target):
    # 2^18 outputs of 1024 broadcast elements: on a GPU, one thread per output adds its
    # whole axis (strided_thread_per_output). Four f32 running sums of 256 elements each
    # would be 2.4e-6 off here (worked out in numpy's f32 arithmetic).
    one = target.lib.from_numpy(np.full((1, 1), 0.1, dtype=np.float32), "f32")
    src = target.lib.broadcast_to(one, (1 << 18, 1024))
    _check(target, src, 1, np.full(1 << 18, 1024 * _f32(0.1)))


def test_random_rows_match_float64(target, seed):
    rng = np.random.default_rng(seed)
    values = rng.random((3, 3 * 10**6), dtype=np.float32)
    exact = values.astype(np.float64).sum(axis=1)
    _check(target, target.lib.from_numpy(values, "f32"), 1, exact)
    _check(target, target.lib.from_numpy(values, "f32")[:, ::3], 1,
           values[:, ::3].astype(np.float64).sum(axis=1))
    _check(target, target.lib.permute(target.lib.from_numpy(values.T.copy(), "f32"), (1, 0)), 1, exact)
