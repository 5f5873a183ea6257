"""copy beyond the shared cases of test_cases.py: broadcasting src to dst."""

import numpy as np
import pytest

import operator_runtime as ort


@pytest.mark.parametrize("dst_shape, src_shape", [((4, 5), (5,)), ((2, 3, 4), (3, 1)),
                                                  ((3, 2), ()), ((0, 3), (3,))])
def test_src_broadcasts_to_dst(dst_shape, src_shape, target, seed):
    lib = target.lib
    src = lib.randn(np.random.default_rng(seed), src_shape)
    dst = lib.full_nan(dst_shape, "f32")
    assert ort.copy_(dst, src, backend=target.backend) is dst
    expected = np.broadcast_to(lib.to_f64(src), dst_shape)
    np.testing.assert_array_equal(lib.to_f64(dst), expected)


def test_copy_is_a_new_contiguous_array(target, seed):
    lib = target.lib
    src = lib.permute(lib.randn(np.random.default_rng(seed), (5, 3)), (1, 0))
    dst = ort.copy(src, backend=target.backend)
    assert dst.shape == src.shape and dst.dtype == src.dtype
    if lib.name == "numpy":
        assert dst.flags.c_contiguous and not np.shares_memory(dst, src)
    np.testing.assert_array_equal(lib.to_f64(dst), lib.to_f64(src))


@pytest.mark.parametrize("past", [0, 4, 16, 48, 1008, 4080])
@pytest.mark.parametrize("dtype, bits", [(np.float32, np.uint32), (np.float16, np.uint16)])
@pytest.mark.parametrize("nbytes", [280004, (32 << 20) + 12])
def test_dense_copy_at_page_offsets(past, dtype, bits, nbytes, target, seed):
    """The destination `past` bytes after the source within a 4 KiB page: the CPU copies with
    memcpy, with 64-byte moves where memcpy is slow (1-63 bytes past), or past 32 MiB with
    streaming stores from the destination's first 16-byte boundary; every bit arrives, NaN
    payloads too, over lengths that two threads share."""
    if target.lib.name != "numpy":
        pytest.skip("numpy buffers placed at chosen page offsets (the CPU's dense copy)")
    size = np.dtype(bits).itemsize
    n = nbytes // size
    span = -(-nbytes // 4096) * 4096
    buf = np.zeros(2 * span + 3 * 4096, dtype=np.uint8)
    base = -buf.ctypes.data % 4096
    raw = np.random.default_rng(seed).integers(0, np.iinfo(bits).max, n, dtype=bits, endpoint=True)
    src = buf[base:base + n * size].view(bits)
    src[:] = raw
    start = base + span + 4096 + past
    dst = buf[start:start + n * size].view(bits)
    ort.copy_(dst.view(dtype), src.view(dtype), backend=target.backend)
    assert (dst.ctypes.data - src.ctypes.data) % 4096 == past
    np.testing.assert_array_equal(dst, raw)
