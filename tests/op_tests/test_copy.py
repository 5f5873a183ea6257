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
