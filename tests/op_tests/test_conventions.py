"""numpy / PyTorch conventions: out= on every out-of-place function, reduce_sum over every
element by default and over tuples of dims, DLPack objects, torch tensors with the negative
or conjugate bit, the plan cache of one-shot calls, CPU threads, the package's import time,
type hints and docstrings. GPU cases run where the target is a torch CUDA tensor (the
H200 run: pytest --backend nvidia --lib torch); without torch or a GPU they skip, saying so."""

import inspect
import os
import subprocess
import sys
import typing
from pathlib import Path

import numpy as np
import pytest

import operator_runtime as ort
from operator_runtime import _plan_cache
from operator_runtime_testing.threads import run_in_threads

OUT_OF_PLACE = {  # op -> (function, its inputs' count, keyword parameters)
    "copy": (ort.copy, 1, {}), "vector_add": (ort.vector_add, 2, {}),
    "relu": (ort.relu, 1, {"negative_slope": 0.25}), "silu": (ort.silu, 1, {}),
    "softmax": (ort.softmax, 1, {"dim": 0}), "reduce_sum": (ort.reduce_sum, 1, {"dim": 1}),
}
IN_PLACE = {"copy": ort.copy_, "vector_add": ort.vector_add_, "relu": ort.relu_,
            "silu": ort.silu_, "softmax": ort.softmax_, "reduce_sum": ort.reduce_sum_}


def _f64(target, a):
    return target.lib.to_f64(a)


def _torch_or_skip():
    try:
        import torch
    except ImportError:
        pytest.skip("torch is not installed")
    return torch


@pytest.fixture(params=["cpu", "cuda"])
def torch_device(request):
    """A torch device this process can compute on (CUDA: with a GPU backend built in)."""
    torch = _torch_or_skip()
    if request.param == "cuda":
        if not torch.cuda.is_available():
            pytest.skip("torch has no CUDA device here")
        if not {"nvidia", "metax"} & set(ort.available_backends()):
            pytest.skip(f"{ort.library_path()} has no GPU backend with a device")
    return torch.device(request.param)


# out= --------------------------------------------------------------------------------

@pytest.mark.parametrize("op", sorted(OUT_OF_PLACE))
def test_out_keyword_writes_and_returns_out(op, target, seed):
    func, n_inputs, params = OUT_OF_PLACE[op]
    rng = np.random.default_rng(seed)
    xs = [target.lib.randn(rng, (5, 7)) for _ in range(n_inputs)]
    expected = func(*xs, **params, backend=target.backend)
    out = target.lib.full_nan(tuple(expected.shape), "f32")
    got = func(*xs, **params, out=out, backend=target.backend)
    assert got is out
    np.testing.assert_array_equal(_f64(target, out), _f64(target, expected))
    # The op_(out, ...) form agrees.
    out2 = target.lib.full_nan(tuple(expected.shape), "f32")
    assert IN_PLACE[op](out2, *xs, **params, backend=target.backend) is out2
    np.testing.assert_array_equal(_f64(target, out2), _f64(target, expected))


def test_out_keyword_checks_the_output(target):
    x = target.lib.empty((3, 4))
    with pytest.raises(ValueError):
        ort.relu(x, out=target.lib.empty((5,)))
    with pytest.raises(TypeError, match="dtype"):
        ort.softmax(x, out=target.lib.empty((3, 4), "f16"))
    with pytest.raises(ValueError, match=r"out has shape \(3,\)"):
        ort.reduce_sum(x, 1, keepdim=True, out=target.lib.empty((3,)))


# reduce_sum ---------------------------------------------------------------------------

def test_reduce_sum_default_is_every_element(target, seed):
    x = target.lib.randn(np.random.default_rng(seed), (4, 5, 6))
    got = ort.reduce_sum(x, backend=target.backend)
    assert tuple(got.shape) == ()
    x64 = _f64(target, x)
    np.testing.assert_allclose(_f64(target, got), x64.sum(), rtol=1e-5, atol=1e-5)
    kept = ort.reduce_sum(x, keepdim=True, backend=target.backend)
    assert tuple(kept.shape) == (1, 1, 1)
    out = target.lib.empty(())
    assert ort.reduce_sum_(out, x, backend=target.backend) is out
    np.testing.assert_allclose(_f64(target, out), x64.sum(), rtol=1e-5, atol=1e-5)


@pytest.mark.parametrize("layout", ["contiguous", "transposed", "strided"])
@pytest.mark.parametrize("dims", [(0, 1), (1, 2), (0, 2), (2, 0), (-1, -3, 1), (1,), 2])
@pytest.mark.parametrize("keepdim", [False, True])
def test_reduce_sum_tuple_of_dims(dims, keepdim, layout, target, seed):
    rng = np.random.default_rng(seed)
    base = target.lib.randn(rng, (6, 5, 8))
    x = {"contiguous": base, "transposed": target.lib.permute(base, (2, 0, 1)),
         "strided": base[::2, :, ::3]}[layout]
    x64 = _f64(target, x)
    axis = dims if isinstance(dims, int) else tuple(dims)
    want = x64.sum(axis=axis, keepdims=keepdim)
    got = ort.reduce_sum(x, dims, keepdim, backend=target.backend)
    assert tuple(got.shape) == want.shape
    np.testing.assert_allclose(_f64(target, got), want, rtol=1e-5, atol=1e-5)
    out = target.lib.full_nan(want.shape, "f32")
    assert ort.reduce_sum(x, dims, keepdim, out=out, backend=target.backend) is out
    np.testing.assert_allclose(_f64(target, out), want, rtol=1e-5, atol=1e-5)


def test_reduce_sum_copies_nothing_when_dims_merge(target, seed):
    """Adjacent dims of a contiguous src (and every dim) reduce a view: prepare works, and
    run_inputs takes new arrays of the same layout."""
    rng = np.random.default_rng(seed)
    x = target.lib.randn(rng, (3, 4, 5))
    out = target.lib.full_nan((3,), "f32")
    with ort.prepare_reduce_sum(out, x, (1, 2), backend=target.backend) as op:
        assert op.run() is out
        np.testing.assert_allclose(_f64(target, out), _f64(target, x).sum(axis=(1, 2)),
                                   rtol=1e-5, atol=1e-5)
        y = target.lib.randn(rng, (3, 4, 5))
        with pytest.raises(ValueError):  # another src layout than prepared
            op.run_inputs(target.lib.empty((3,)), y[:, :, :4])
        out3 = target.lib.full_nan((3,), "f32")
        assert op.run_inputs(out3, y) is out3
        np.testing.assert_allclose(_f64(target, out3), _f64(target, y).sum(axis=(1, 2)),
                                   rtol=1e-5, atol=1e-5)
    total = target.lib.empty(())
    with ort.prepare_reduce_sum(total, x, backend=target.backend) as op:
        op.run()
    np.testing.assert_allclose(_f64(target, total), _f64(target, x).sum(), rtol=1e-5, atol=1e-5)
    with pytest.raises(ValueError, match=r"cannot be viewed with dims \(0, 2\) merged"):
        ort.prepare_reduce_sum(target.lib.empty((4,)), x, (0, 2), backend=target.backend)


def test_reduce_sum_dim_errors(target):
    x = target.lib.empty((3, 4))
    with pytest.raises(ValueError, match="ambiguous"):
        ort.reduce_sum(x, ())
    with pytest.raises(ValueError, match="more than once"):
        ort.reduce_sum(x, (0, -2))
    with pytest.raises(ValueError, match="out of range"):
        ort.reduce_sum(x, (0, 2))
    with pytest.raises(TypeError, match="dim must be an int"):
        ort.reduce_sum(x, (0, 1.0))


# DLPack -------------------------------------------------------------------------------

class DLPackOnly:
    """An array known to operator_runtime only through the DLPack protocol."""

    def __init__(self, array):
        self.array = array

    def __dlpack__(self, *args, **kwargs):
        return self.array.__dlpack__(*args, **kwargs)

    def __dlpack_device__(self):
        return self.array.__dlpack_device__()


def test_dlpack_objects_as_inputs_and_outputs(target, seed):
    rng = np.random.default_rng(seed)
    x = target.lib.randn(rng, (4, 33))
    y = target.lib.randn(rng, (4, 33))
    got = ort.vector_add(DLPackOnly(x), DLPackOnly(y), backend=target.backend)
    want = (_f64(target, x) + _f64(target, y)).astype(np.float32)  # one f32 rounding
    np.testing.assert_array_equal(_f64(target, got), want)
    out = target.lib.full_nan((4, 33), "f32")
    wrapped = DLPackOnly(out)
    assert ort.relu(DLPackOnly(x), out=wrapped, backend=target.backend) is wrapped
    assert ort.softmax_(wrapped, DLPackOnly(x), backend=target.backend) is wrapped
    np.testing.assert_allclose(_f64(target, out), _f64(target, ort.softmax(x, backend=target.backend)))
    total = ort.reduce_sum(DLPackOnly(x), backend=target.backend)
    # A sum's rounding error scales with the magnitudes summed, not with the total, which
    # random signs can bring near zero.
    np.testing.assert_allclose(float(_f64(target, total)), _f64(target, x).sum(), rtol=1e-5,
                               atol=1e-5 * np.abs(_f64(target, x)).sum())


def test_dlpack_without_an_importer_is_a_clear_error():
    class OnlyDevice:
        def __dlpack__(self, *args, **kwargs):
            raise BufferError("nothing to export")

        def __dlpack_device__(self):
            return (1, 0)

    with pytest.raises(TypeError, match="DLPack array that could not be imported"):
        ort.relu(OnlyDevice())

    class Elsewhere(OnlyDevice):
        def __dlpack_device__(self):
            return (4, 0)  # OpenCL

    with pytest.raises(TypeError, match="device type 4"):
        ort.relu(Elsewhere())


# torch's negative and conjugate bits ---------------------------------------------------

def test_torch_negative_bit_is_resolved_for_inputs(torch_device):
    torch = _torch_or_skip()
    x = torch.linspace(-3, 3, 64, device=torch_device)
    neg = torch._neg_view(x)
    assert neg.is_neg()
    torch.testing.assert_close(ort.relu(neg), torch.relu(-x))
    torch.testing.assert_close(ort.vector_add(neg, x), torch.zeros_like(x))
    torch.testing.assert_close(ort.reduce_sum(neg), (-x).sum(), rtol=1e-5, atol=1e-5)
    out = torch.empty_like(x)
    assert ort.relu(neg, 0.5, out=out) is out
    torch.testing.assert_close(out, torch.nn.functional.leaky_relu(-x, 0.5))
    z = torch.complex(x, 2 * x)
    imag = z.conj().imag  # a real view with the negative bit
    assert imag.is_neg()
    torch.testing.assert_close(ort.copy(imag), -2 * x)
    torch.testing.assert_close(ort.softmax(imag.reshape(4, 16)), torch.softmax(-2 * x.reshape(4, 16), -1))


def test_torch_negative_bit_refused_for_outputs_and_prepare(torch_device):
    torch = _torch_or_skip()
    x = torch.linspace(-3, 3, 64, device=torch_device)
    buf = torch.zeros_like(x)
    with pytest.raises(ValueError, match="negative bit.*cannot be written"):
        ort.relu_(torch._neg_view(buf), x)
    with pytest.raises(ValueError, match="negative bit.*cannot be written"):
        ort.relu(x, out=torch._neg_view(buf))
    assert torch.count_nonzero(buf) == 0
    with pytest.raises(ValueError, match="PreparedOp reads its arrays at every run"):
        ort.prepare_relu(buf, torch._neg_view(x))
    with ort.prepare_relu(buf, x) as op:  # run_inputs resolves: it reads them now
        op.run_inputs(buf, torch._neg_view(x))
    torch.testing.assert_close(buf, torch.relu(-x))


def test_torch_out_keyword_and_cuda_tensors(torch_device):
    torch = _torch_or_skip()
    x = torch.randn(8, 300, device=torch_device)
    out = torch.empty(8, device=torch_device)
    assert ort.reduce_sum(x, 1, out=out) is out
    torch.testing.assert_close(out, x.sum(1), rtol=1e-5, atol=1e-4)
    torch.testing.assert_close(ort.reduce_sum(x), x.sum(), rtol=1e-5, atol=1e-3)
    torch.testing.assert_close(ort.reduce_sum(x.t(), (0, 1)), x.sum(), rtol=1e-5, atol=1e-3)
    torch.testing.assert_close(ort.reduce_sum(x[:, ::3], (0, 1), keepdim=True),
                               x[:, ::3].sum((0, 1), keepdim=True), rtol=1e-5, atol=1e-3)
    # Host memory comes back through numpy.from_dlpack, CUDA memory through torch.
    got = ort.vector_add(DLPackOnly(x), DLPackOnly(x))
    torch.testing.assert_close(torch.as_tensor(got, device=x.device), 2 * x)


# The plan cache ------------------------------------------------------------------------

def test_one_shot_calls_reuse_a_descriptor(target, seed, monkeypatch):
    from operator_runtime import _prepared

    made = []
    real = _prepared._create_c
    monkeypatch.setattr(_prepared, "_create_c", lambda *a: made.append(a[1]) or real(*a))
    ort.clear_plan_cache()
    x = target.lib.randn(np.random.default_rng(seed), (3, 17))
    first = ort.relu(x, 0.5, backend=target.backend)
    again = ort.relu(x, 0.5, backend=target.backend)
    np.testing.assert_array_equal(_f64(target, first), _f64(target, again))
    assert made == ["relu"]
    ort.relu(x, 0.25, backend=target.backend)  # another parameter: another descriptor
    ort.relu(x[:, :5], 0.5, backend=target.backend)  # another layout
    assert made == ["relu"] * 3
    assert _plan_cache.size() == 3
    ort.clear_plan_cache()
    assert _plan_cache.size() == 0


def test_plan_cache_is_bounded_and_thread_safe(target, seed):
    ort.clear_plan_cache()
    rng = np.random.default_rng(seed)
    xs = [target.lib.randn(rng, (n,)) for n in range(1, 2 * _plan_cache.CAPACITY + 2)]

    def work(offset):
        for i in range(len(xs)):
            x = xs[(i + offset) % len(xs)]
            got = ort.relu(x, 0.5, backend=target.backend)
            ref = _f64(target, x)
            np.testing.assert_array_equal(_f64(target, got), np.where(ref > 0, ref, 0.5 * ref))

    errors = run_in_threads(work, ((k * 7,) for k in range(6)))
    assert not errors, errors[0]
    assert _plan_cache.size() <= _plan_cache.CAPACITY


def test_plan_cache_float_parameters_by_their_bits():
    from operator_runtime.ops._common import _param_key

    assert _param_key(0.0) != _param_key(-0.0)


# Threads -------------------------------------------------------------------------------

def test_set_num_threads():
    before = ort.get_num_threads()
    try:
        ort.set_num_threads(1)
        assert ort.get_num_threads() == 1
        x = np.linspace(-1, 1, 1 << 17, dtype=np.float32)
        one = ort.silu(x)
        ort.set_num_threads(3)
        assert ort.get_num_threads() == 3
        np.testing.assert_array_equal(ort.silu(x), one)
        ort.set_num_threads(0)
        assert ort.get_num_threads() >= 1
        with pytest.raises(ValueError, match="outside 0..1024"):
            ort.set_num_threads(-1)
    finally:
        ort.set_num_threads(0)
    assert ort.get_num_threads() == before


# Import time, typing, docstrings --------------------------------------------------------

def _python(code):
    env = dict(os.environ, PYTHONPATH=os.pathsep.join(p for p in sys.path if p))
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                            env=env, timeout=120)
    assert result.returncode == 0, result.stderr
    return result.stdout


def test_import_is_light():
    """No array library is imported by the package, and the import takes well under a
    second even on a busy 2-core machine (about 30 ms measured there; numpy alone 150)."""
    out = _python("import sys, time\n"
                  "t = time.perf_counter()\n"
                  "import operator_runtime\n"
                  "print(time.perf_counter() - t)\n"
                  "print(' '.join(m for m in ('numpy', 'ml_dtypes', 'torch', 'cupy') "
                  "if m in sys.modules))")
    seconds, heavy = out.splitlines()[0], out.splitlines()[1:]
    assert not heavy or not heavy[0].strip(), f"imported eagerly: {heavy}"
    assert float(seconds) < 0.5


def test_backends_and_tilelang_do_not_import_each_other():
    source = (Path(ort.__file__).parent / "_tilelang.py").read_text()
    assert "_backends" not in source.split('"""', 2)[2].split("\ndef ")[0]


def test_py_typed_and_annotations():
    assert (Path(ort.__file__).parent / "py.typed").is_file()
    for name in ort.ops.__all__:
        hints = typing.get_type_hints(getattr(ort, name))
        assert "return" in hints and "backend" in hints, name
    for name in ("set_num_threads", "get_num_threads", "clear_plan_cache"):
        assert "return" in typing.get_type_hints(getattr(ort, name)), name


@pytest.mark.parametrize("op", sorted(OUT_OF_PLACE))
def test_docstrings_say_what_help_needs(op):
    doc = inspect.getdoc(getattr(ort, op))
    for needed in ("backend", "variant", "float16", "bfloat16", "out=", "Raises", "Example",
                   f"{op}_(out", f"prepare_{op}", ">>> "):
        assert needed in doc, f"help(ort.{op}) lacks {needed!r}"


@pytest.mark.parametrize("op", sorted(OUT_OF_PLACE))
def test_docstring_examples_run(op):
    import doctest

    finder = doctest.DocTestFinder()
    runner = doctest.DocTestRunner(optionflags=doctest.NORMALIZE_WHITESPACE)
    for test in finder.find(getattr(ort, op), op, globs={}):
        runner.run(test)
    assert runner.tries > 0 and runner.failures == 0


def test_byte_swapped_numpy_arrays_are_refused():
    swapped = np.ones(4, dtype=np.dtype(np.float32).newbyteorder())
    with pytest.raises(TypeError, match="dtype"):
        ort.relu(swapped)


@pytest.mark.skipif(not hasattr(os, "fork"), reason="no os.fork on this platform")
def test_forked_child_computes_with_a_fresh_plan_cache():
    """A child forked after one-shot calls (cached descriptors, started CPU workers) gets
    an empty plan cache and computes correctly on several threads."""
    x = np.linspace(-1, 1, 1 << 17, dtype=np.float32)
    want = np.where(x > 0, x, np.float32(0.5) * x)  # exact in f32
    assert np.array_equal(ort.relu(x, 0.5), want)  # the parent's call fills the plan cache
    pid = os.fork()
    if pid == 0:  # the child: no pytest machinery, only an exit status
        try:
            ok = _plan_cache.size() == 0 and np.array_equal(ort.relu(x, 0.5), want)
        except BaseException:
            ok = False
        os._exit(0 if ok else 1)
    _, status = os.waitpid(pid, 0)
    assert os.WIFEXITED(status) and os.WEXITSTATUS(status) == 0
