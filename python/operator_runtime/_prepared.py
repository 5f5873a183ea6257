"""PreparedOp: a descriptor and its workspace, created once and run many times."""

from __future__ import annotations

import ctypes
import threading
import weakref
from typing import Any, Optional

from . import _backends, _lib, _native
from ._arrays import DTYPE_NAMES, describe_all
from .errors import OperatorRuntimeError


class PreparedOp:
    """One operator prepared for arrays of fixed shapes, strides, dtype and device.

    Made by the prepare_<op> functions. run() computes on the arrays given to
    prepare (on host arrays with the compiled module, one C call: the cheapest way
    to call an operator from Python); run_inputs(*arrays) on new arrays of the same
    layout (output first, as in prepare). destroy() (or leaving a `with` block)
    frees the descriptor.
    """

    # Class defaults, so that __del__ is safe on an object whose __init__ failed.
    _desc = None
    _runner = None
    _calls = None  # C descriptor only: guards _desc and counts the C calls using it
    _calls_lock = None  # _calls' lock, taken directly by the calls (cheaper than the Condition)
    _adapt = None  # run_inputs' arrays -> (the arrays the C call takes, the result to return)
    _slot = None  # host arrays with the compiled module: run()'s whole call (_native's Slot)

    def __init__(self, op, operands, params, backend, func=None, variant=None, keep_arrays=True):
        """Internal: use the prepare_<op> functions. `operands` come from describe_all;
        `func` names the calling function in error messages; `variant` names a kernel
        variant (operator_runtime.variants(op, backend)); None or "auto": the plan's choice.
        keep_arrays=False (the plan cache's descriptors): no array kept alive, run() not
        usable (the caller runs it through _execute_owned on arrays of its own)."""
        self.op = op
        self._operands = operands
        self._ptrs = _data_pointers(operands)  # run()'s, worked out once
        self._params = params
        func = func or f"prepare_{op}"
        if variant is not None and not isinstance(variant, str):
            raise TypeError(f"{func}: variant must be a str or None, got {type(variant).__name__}")
        self.backend = _backends.resolve(func, backend, operands)
        self.variant = variant or "auto"
        self.workspace_size = 0
        self._workspace = None
        lib = _lib.get()
        python_backend = self.backend in _backends.PYTHON_BACKENDS
        if python_backend and self.variant != "auto":
            raise ValueError(f"{func}: variant = {variant!r}: the {self.backend} backend has "
                             f"no kernel variants (use variant=None)")
        self._c = lib.op(op)
        self._check = lib.check
        self._destroy_c = self._c.destroy  # kept so __del__ needs no module globals
        self._calls_lock = threading.Lock()
        self._calls = threading.Condition(self._calls_lock)
        self._in_flight = 0  # C calls using _desc now, in any thread: destroy() waits for them
        # A Python backend validates in C too, whichever backend runs (one validation per
        # operator): it keeps a descriptor made on the CPU backend (which reads no data),
        # whose create checks the arguments and whose oprt_check_<op>_execute checks the
        # operands of every run (overlap, ...); the CPU kernel never runs.
        code = _lib.BACKEND_CODES["cpu" if python_backend else self.backend]
        self._desc = _create_c(lib, op, operands, params, code)
        try:
            if python_backend:
                prepare = _backends.python_backend(self.backend)
                self._runner = prepare(op, tuple(o.array for o in operands), dict(params))
                return
            if variant is not None:  # before the workspace query: a variant may change its size
                lib.check(self._c.set_variant(self._desc, variant.encode()))
            size = ctypes.c_size_t(0)
            lib.check(self._c.workspace_size(self._desc, ctypes.byref(size)))
            self.workspace_size = size.value
            if size.value:
                first = operands[0]
                self._workspace = first.kind.workspace(first, size.value)
            if not keep_arrays:
                self._operands = [o.without_arrays() for o in operands]
                self._ptrs = None
            elif _native.module is not None and operands[0].on_host:  # launched without a stream
                self._arm_slot(ctypes.cast(self._c.execute, ctypes.c_void_p).value)
        except BaseException:
            self.destroy()
            raise

    @property
    def kernel_name(self) -> Optional[str]:
        """The kernel the C library's plan picked for these arrays, e.g. "cpu.rows_buffered"
        (for logs and benchmarks; a Python backend's runner may name one too, e.g.
        "tilelang.softmax")."""
        desc, runner = self._enter_call()
        try:
            if runner is not None:
                return getattr(runner, "kernel_name", None)
            name = ctypes.c_char_p()
            self._check(self._c.kernel_name(desc, ctypes.byref(name)))
        finally:
            self._exit_call()
        return (name.value or b"").decode()

    def run(self) -> Any:
        """Runs on the arrays given to prepare; returns the output array."""
        return self._run_python()

    def _run_python(self):
        return self._execute(self._live_operands(), self._ptrs)

    def run_inputs(self, *arrays: Any) -> Any:
        """Runs on new arrays (output first) laid out exactly like the prepared ones."""
        prepared = self._live_operands()
        names = tuple(o.name for o in prepared)
        if len(arrays) != len(prepared):
            raise TypeError(f"{self.op}.run_inputs: takes {len(prepared)} arrays "
                            f"({', '.join(names)}), got {len(arrays)}")
        result = None
        if self._adapt is not None:
            arrays, result = self._adapt(arrays)
        operands = describe_all(f"{self.op}.run_inputs", names, arrays, has_out=True)
        for new, old in zip(operands, prepared):
            where = f"{self.op}.run_inputs: {new.name}"
            if new.kind is not old.kind:
                raise TypeError(f"{where} is a {new.kind.name}; prepared with a {old.kind.name}")
            if new.dtype != old.dtype:
                raise TypeError(f"{where} has dtype {DTYPE_NAMES[new.dtype]}; prepared with "
                                f"{DTYPE_NAMES[old.dtype]}")
            if new.layout() != old.layout():
                raise ValueError(
                    f"{where} has shape {new.shape}, strides {new.strides} on "
                    f"{new.device_string()}; prepared with shape {old.shape}, strides "
                    f"{old.strides} on {old.device_string()} (element strides)")
        out = self._execute(operands, _data_pointers(operands))
        return out if result is None else result

    def destroy(self) -> None:
        """Frees the descriptor and workspace; calling it again does nothing. Safe from
        any thread: it waits for runs in progress in other threads, and frees the
        descriptor exactly once."""
        calls = self._calls
        if calls is None:  # __init__ failed before create
            self._operands = None
            return
        with calls:
            desc, self._desc = self._desc, None
            self._runner = None
            self._operands = None
            while self._in_flight:
                calls.wait()
            slot, self._slot = self._slot, None
            if slot is not None:  # waits for its run in progress; kept taken, it runs no more
                slot.acquire()
                slot.detach()
                self.__dict__.pop("run", None)
            self._workspace = None  # after the runs that may still be using it
        if desc is not None:
            self._check(self._destroy_c(desc))

    def __enter__(self) -> PreparedOp:
        return self

    def __exit__(self, *exc):
        self.destroy()

    def __del__(self):
        # No Python-path call is in flight: each holds a reference to self; a run of the
        # Slot does not (a caller may keep `run` and drop the op), so the Slot is taken
        # first, which waits for such a run. At interpreter exit this runs too; it uses
        # only attributes of self, no module globals.
        slot, self._slot = self._slot, None
        if slot is not None:
            slot.acquire()
            slot.detach()
        desc, self._desc = self._desc, None
        if desc is not None:
            self._destroy_c(desc)  # status ignored: nothing can be raised from here

    def __repr__(self):
        if self._operands is None:
            return f"PreparedOp({self.op}, destroyed)"
        args = ", ".join(f"{o.name}={o.shape}" for o in self._operands)
        params = "".join(f", {k}={v!r}" for k, v in self._params.items())
        variant = "" if self.variant == "auto" else f", variant={self.variant!r}"
        return (f"PreparedOp({self.op}, backend={self.backend}, {args}, "
                f"dtype={DTYPE_NAMES[self._operands[0].dtype]}{params}{variant})")

    def _arm_slot(self, execute):
        """Gives run() its whole call in C: a Slot (_new_slot) calling `execute`, whose run
        becomes this op's run, so no Python frame stands between the caller and the C call
        (on 4096-float vector_adds run in rotation, their objects out of the caches: 0.25 us
        of about 2 a run). The Slot takes the Python path (_run_python) for the runs it
        cannot take itself."""
        self._slot = self._new_slot(execute)
        self.run = self._slot.run

    def _new_slot(self, execute):
        """run()'s whole call for arrays on the host: a Slot of the compiled module (_native)
        armed with this descriptor, its workspace and `execute` (the address of
        oprt_execute_<op>), bound to the prepared arrays."""
        ws = self._workspace
        slot = _native.module.Slot()
        slot.arm(None, execute, self._c.num_inputs, self._desc.value, ws and ws.ptr,
                 self.workspace_size, None, self._check)
        slot.bind(self._operands[0].source, *self._ptrs)
        slot.fallback(_run_slot_python, weakref.ref(self))
        return slot

    def _returns(self, result):
        """Makes run() return `result`, the array the prepared output is a view of."""
        self._operands[0].source = result
        if self._slot is not None:
            self._slot.bind(result, *self._ptrs)

    def _live_operands(self):
        if self._operands is None:
            raise OperatorRuntimeError(f"{self.op}: this PreparedOp was destroyed")
        return self._operands

    def _execute(self, operands, ptrs):
        out = operands[0]
        desc, runner = self._enter_call()
        try:
            if runner is not None:  # a Python backend: the C checks of execute, then its kernel
                self._check(self._c.check_execute(desc, *ptrs))
                runner(tuple(o.array for o in operands))
                return out.source
            ws = self._workspace
            status = out.kind.launch(out.device, ws, lambda stream: self._c.execute(
                desc, ws and ws.ptr, self.workspace_size, *ptrs, stream))
        finally:
            self._exit_call()
        self._check(status)
        return out.source

    def _execute_owned(self, operands, ptrs):
        """_execute for a PreparedOp no other thread can reach (the plan cache's entry locked
        by one call): no in-flight accounting. A C backend only."""
        out = operands[0]
        ws = self._workspace
        status = out.kind.launch(out.device, ws, lambda stream: self._c.execute(
            self._desc, ws and ws.ptr, self.workspace_size, *ptrs, stream))
        self._check(status)
        return out.source

    def _enter_call(self):
        """The live descriptor and runner (None for a C backend), counted as in use until
        _exit_call (destroy() waits)."""
        with self._calls_lock:
            if self._desc is None:
                raise OperatorRuntimeError(f"{self.op}: this PreparedOp was destroyed")
            self._in_flight += 1
            return self._desc, self._runner

    def _exit_call(self):
        with self._calls_lock:  # holding it is holding _calls: notify_all may be called
            self._in_flight -= 1
            if not self._in_flight and self._desc is None:  # destroy() is waiting
                self._calls.notify_all()


def _data_pointers(operands):
    """The operands' data pointers as the C calls take them (None for NULL)."""
    return [o.ptr or None for o in operands]


def _create_c(lib, op, operands, params, backend_code):
    """A C descriptor of `op` on a backend (its arguments validated by the C library)."""
    c = lib.op(op)
    lib.set_backend(backend_code)  # per thread; read by create
    desc = ctypes.c_void_p()
    views = [o.view() for o in operands]
    # The op's one scalar parameter (negative_slope or dim) is the C call's last argument.
    scalar = [c.scalar_type(*params.values())] if c.scalar_type else []
    lib.check(c.create(ctypes.byref(desc), *map(ctypes.byref, views), *scalar))
    return desc


def _run_slot_python(op):
    """A prepared op's Slot's Python path: the runs the Slot cannot take (another thread's
    run in progress, a destroyed op); op is None where the op is gone and its run was kept."""
    if op is None:
        raise OperatorRuntimeError("run(): this PreparedOp no longer exists (its run method "
                                   "was kept after the op was deleted)")
    return op._run_python()
