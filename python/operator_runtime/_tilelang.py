"""The "tilelang" backend: the operators written in TileLang (ops/<op>/tilelang/<op>_tl.py).

Each kernel file defines program(dtype, ...) -> a T.prim_func whose sizes are run-time
values (T.dynamic), so one compiled kernel per (operator, dtype, variant) serves every
shape; compiled kernels are cached in this process (and TileLang keeps its own disk cache
under ~/.tilelang, so a second process does not run nvcc again).

The kernels take contiguous data: elementwise ones a 1-d view, reductions and softmax an
(m, l) view with the reduced dim last, matmul row-major (m, k) and (k, n) matrices. This wrapper brings any valid layout to that form
with torch: inputs that are not already in it (strided, transposed, broadcast, the reduced
dim not last) are copied with .contiguous(), and an output that is not is computed into a
contiguous temporary and copied back. Those copies cost time, never correctness: the
arguments were already validated by the C library (PreparedOp keeps a CPU descriptor:
its create checks the arguments, oprt_check_<op>_execute the operands of every run).
Arrays must be torch tensors on a CUDA device.
"""

import atexit
import importlib.util
import os
import threading
from pathlib import Path

from . import _manifest
from .errors import ERR_NOT_SUPPORTED, InvalidArgumentError, OperatorRuntimeError

INSTALL_HINT = ("pip install 'operator-runtime[tilelang]' (or pip install -r "
                "requirements-tilelang.txt; on a machine without a package index see "
                "scripts/gpu/fetch_tilelang_wheels.sh)")

# How the wrapper brings each kind of operator (ops/manifest.json) to its kernel's form.
_ELEMENTWISE = "elementwise"  # flat contiguous operands of the output's shape
_ROWS = "rows"  # (m, l) rows, the reduced dim (params["dim"]) made the last
_MATMUL = "matmul"  # a (m, k) @ b (k, n), both made row-major
_FORMS = {"elementwise": _ELEMENTWISE, "reduction": _ROWS, "normalization": _ROWS,
          "matmul": _MATMUL}
_INT32_MAX = 2**31 - 1  # the kernels' sizes are int32 (their indices are int64)

_lock = threading.Lock()
_modules = {}
_kernels = {}
_state = {}

# Runs in progress, and whether the interpreter is exiting (see _at_exit).
_runs = threading.Condition(threading.Lock())
_gate = {"in_flight": 0, "closing": False}
_EXIT_WAIT_S = 60.0  # how long exit waits for runs in progress (a hung kernel must not hang it)


def _at_exit():
    """Lets the runs in progress finish and parks every later one, before the interpreter
    finalizes. A daemon thread still inside a run when finalization starts would be ended
    by pthread_exit when it next takes the GIL; its forced unwind through the C++ frames
    of torch or tvm-ffi (noexcept ones) calls std::terminate ("terminate called without
    an active exception", exit status -6). Parked threads wait on a lock, without the GIL,
    and end with the process, as CPython 3.14 treats daemon threads itself."""
    with _runs:
        _gate["closing"] = True
        _runs.wait_for(lambda: _gate["in_flight"] == 0, timeout=_EXIT_WAIT_S)


def load():
    """Imports tilelang and torch; returns the backend's prepare function (which
    _backends registers), or raises OperatorRuntimeError saying why it cannot (the reason
    is also what the test suite prints when it skips). This module imports nothing of
    the package's backend registry: _backends imports it, never the other way round."""
    with _lock:
        if "registered" in _state:
            return prepare
        try:
            import tilelang  # noqa: F401
            import torch
        except Exception as exc:  # ImportError, or a broken install (OSError from a .so)
            raise OperatorRuntimeError(
                f"tilelang backend is not available: importing tilelang failed "
                f"({type(exc).__name__}: {exc}); install it with {INSTALL_HINT}") from None
        _state["torch"] = torch
        _state["registered"] = True
        atexit.register(_at_exit)  # after tilelang's and torch's own: it runs before them
    return prepare


def kernel_path(op):
    """The kernel file of `op` (ops/<op>/tilelang/<op>_tl.py): the installed copy, else the
    one in the source checkout; None when the operator has no TileLang kernel."""
    rel = Path(op, "tilelang", f"{op}_tl.py")
    here = Path(__file__).resolve().parent
    for path in (here / "tilelang_ops" / rel.name, here.parents[1] / "ops" / rel):
        if path.is_file():
            return path
    return None


def _module(op):
    module = _modules.get(op)
    if module is None:
        path = kernel_path(op)
        spec = importlib.util.spec_from_file_location(f"operator_runtime_tilelang_{op}", path)
        module = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(module)
        _modules[op] = module
    return module


def _kernel(op, dtype, *variant):
    """The compiled kernel of `op` for a dtype name ("float16", ...) and variant; compiled
    once per process (nvcc runs here: seconds)."""
    key = (op, dtype, variant)
    kernel = _kernels.get(key)
    if kernel is None:
        with _lock:
            kernel = _kernels.get(key)
            if kernel is None:
                import tilelang

                program = _module(op).program(dtype, *variant)
                # OPRT_TILELANG_TARGET: another target of the installed TileLang (e.g. a
                # MetaX build's own); the kernels were written and validated for "cuda".
                target = os.environ.get("OPRT_TILELANG_TARGET") or "cuda"
                kernel = tilelang.compile(program, target=target,
                                          pass_configs={"tl.enable_fast_math": False})
                _kernels[key] = kernel
    return kernel


def _dtype_name(t):
    return str(t.dtype).replace("torch.", "")


def _check_int32(op, what, value):
    if value > _INT32_MAX:
        raise OperatorRuntimeError(
            f"{op}: tilelang backend: {what} = {value} is over 2^31 - 1, the largest size its "
            f"kernels take; use backend='nvidia'", ERR_NOT_SUPPORTED)


def _aligned(*tensors):
    return all(t.data_ptr() % 16 == 0 for t in tensors)


class _Runner:
    """run(arrays) for one prepared op: arrays are (out, *inputs) torch CUDA tensors of the
    prepared layout."""

    def __init__(self, op, form, params):
        self.op = op
        self.form = form  # _ELEMENTWISE, _ROWS or _MATMUL
        self.params = params
        self.kernel_name = f"tilelang.{op}"

    def __call__(self, arrays):
        with _runs:
            while _gate["closing"]:  # the interpreter is exiting: park (see _at_exit)
                _runs.wait()
            _gate["in_flight"] += 1
        try:
            self._run(arrays)
        finally:
            with _runs:
                _gate["in_flight"] -= 1
                _runs.notify_all()

    def _run(self, arrays):
        torch = _state["torch"]
        out = arrays[0]
        with torch.cuda.device(out.device):
            if self.form == _ELEMENTWISE:
                self._elementwise(torch, out, arrays[1:])
            elif self.form == _MATMUL:
                self._matmul(torch, out, arrays[1], arrays[2])
            else:  # _ROWS
                self._rows(torch, out, arrays[1], self.params["dim"])

    def _elementwise(self, torch, out, inputs):
        n = out.numel()
        if n == 0:
            return
        _check_int32(self.op, "the element count", n)
        # Broadcast (vector_add) and strided inputs become contiguous copies of out's shape.
        flat_in = [t.expand(out.shape).contiguous().view(-1) for t in inputs]
        dst = out.view(-1) if out.is_contiguous() else torch.empty(n, dtype=out.dtype,
                                                                    device=out.device)
        kernel = _kernel(self.op, _dtype_name(out), _aligned(dst, *flat_in))
        extra = [float(self.params["negative_slope"])] if self.op == "relu" else []
        kernel(*flat_in, dst, *extra)
        if not out.is_contiguous():
            out.copy_(dst.view(out.shape))

    def _matmul(self, torch, out, a, b):
        """out = a @ b on row-major operands whose rows suit TMA copies (Hopper: 16-byte
        aligned addresses, rows a multiple of 16 bytes long): a and b as they are where they
        already do, else copied into zero-padded ones (K and N rounded up; zeros along K add
        nothing to the sums) and the result's first n columns copied out."""
        if out.numel() == 0:
            return
        m, k = a.shape
        n = b.shape[1]
        if k == 0:  # the empty sum
            out.zero_()
            return
        for what, value in (("M", m), ("N", n), ("K", k)):
            _check_int32(self.op, what, value)
        step = 16 // out.element_size()
        kp, np_ = -(-k // step) * step, -(-n // step) * step
        a, b = a.contiguous(), b.contiguous()
        if kp != k or not _aligned(a):
            a = torch.nn.functional.pad(a, (0, kp - k))
        if kp != k or np_ != n or not _aligned(b):
            b = torch.nn.functional.pad(b, (0, np_ - n, 0, kp - k))
        direct = out.is_contiguous() and np_ == n and _aligned(out)
        dst = out if direct else torch.empty((m, np_), dtype=out.dtype, device=out.device)
        _kernel(self.op, _dtype_name(out))(a, b, dst)
        if not direct:
            out.copy_(dst[:, :n])

    def _rows(self, torch, out, src, dim):
        """reduce_sum / softmax over `dim`: src as (m, l) rows, the reduced dim last."""
        if src.dim() == 0:  # one element: a (1, 1) row
            src, dim = src.reshape(1), 0
        moved = src.movedim(dim, -1)
        l = moved.shape[-1]
        m = moved.numel() // l if l else 0
        if self.op == "reduce_sum":
            if out.numel() == 0:
                return
            if l == 0:  # the sum over an empty dim
                out.zero_()
                return
        elif src.numel() == 0:
            return
        _check_int32(self.op, "the row count", m)
        _check_int32(self.op, "the row length", l)
        rows = moved.contiguous().view(m, l)
        if self.op == "reduce_sum":
            direct = out.is_contiguous()
            dst = out.view(m) if direct else torch.empty(m, dtype=out.dtype, device=out.device)
        else:
            direct = out.is_contiguous() and dim == src.dim() - 1
            dst = out.view(m, l) if direct else torch.empty((m, l), dtype=out.dtype,
                                                             device=out.device)
        _kernel(self.op, _dtype_name(out))(rows, dst)
        if not direct:
            if self.op == "reduce_sum":
                out.copy_(dst.view(out.shape))
            else:
                out.copy_(dst.view(moved.shape).movedim(-1, dim).reshape(out.shape))


def prepare(op, arrays, params):
    """The backend's entry point (register_backend): checks that the arrays are torch CUDA
    tensors and compiles the kernel now, so that run() only launches."""
    torch = _state["torch"]
    form = _FORMS.get(_manifest.op(op).kind)
    if form is None or kernel_path(op) is None:  # an operator without a TileLang kernel
        raise OperatorRuntimeError(
            f"{op}: the tilelang backend has no kernel for this operator (its file would be "
            f"ops/{op}/tilelang/{op}_tl.py); use backend='nvidia' or 'cpu'", ERR_NOT_SUPPORTED)
    for name, a in zip(("out",) + ("input",) * (len(arrays) - 1), arrays):
        if not isinstance(a, torch.Tensor) or a.device.type != "cuda":
            where = f" on {a.device}" if isinstance(a, torch.Tensor) else ""
            raise InvalidArgumentError(
                f"{op}: the tilelang backend runs on torch tensors in CUDA memory; {name} is a "
                f"{type(a).__module__}.{type(a).__qualname__}{where}")
    runner = _Runner(op, form, params)
    out = arrays[0]
    if out.numel():  # compile now, not in the first timed run
        with torch.cuda.device(out.device):
            if form == _ELEMENTWISE:
                _kernel(op, _dtype_name(out), True)
                _kernel(op, _dtype_name(out), False)
            else:
                _kernel(op, _dtype_name(out))
    return runner
