"""Test cases and the one routine that checks a case on a backend.

tests/cases/<op>.py describe an operator (OpInfo) and list its Cases,
ErrorCases and BenchCases; pytest and tests/run_ops.py both run them through
run_case / run_error_case here, so the two can never disagree.
"""

import re
import zlib
from dataclasses import dataclass, field
from typing import Callable, Optional

import numpy as np

from . import assertions
from .arrays import make_input, make_output


@dataclass(frozen=True)
class Operand:
    """One input: its logical shape and its layout (see arrays.LAYOUTS)."""

    shape: tuple
    layout: str = "contiguous"


@dataclass(frozen=True)
class Case:
    """A correctness case. The output shape follows from the inputs and params.

    inplace: the output is inputs[0] itself. special: "nan_inf" or
    "neg_inf_slice" (along params["dim"]) input values.
    """

    name: str
    inputs: tuple
    out_layout: str = "contiguous"
    params: dict = field(default_factory=dict)
    inplace: bool = False
    special: Optional[str] = None


def case(name, *inputs, **kw):
    """Case(name, ...) with inputs given as shapes or Operands."""
    ops = tuple(x if isinstance(x, Operand) else Operand(tuple(x)) for x in inputs)
    return Case(name, ops, **kw)


@dataclass(frozen=True)
class ErrorCase:
    """A call that must raise `error` with a message matching `match` (a regex).

    call(lib, backend) makes the failing call with arrays of `lib`; `libs`
    limits the case to some array libraries (e.g. read-only numpy views).
    """

    name: str
    call: Callable
    error: type
    match: str
    libs: tuple = ("numpy", "torch")


@dataclass(frozen=True)
class BenchCase:
    """A benchmark: contiguous inputs of these shapes, params; run in each of the run's dtypes.
    series names the line of the roofline plot it belongs to (default: the operator)."""

    name: str
    inputs: tuple
    params: dict = field(default_factory=dict)
    series: str = ""


@dataclass(frozen=True)
class OpInfo:
    """An operator as the tests see it.

    func(*inputs, **params), func_(out, *inputs, **inplace params) and
    prepare(out, *inputs, **inplace params) are the package's three forms;
    inplace_params names the params the last two take. reference(*inputs64,
    **params) is float64 numpy; tolerance(dtype, inputs64, params) gives (rtol,
    atol); torch_reference(*tensors, **params), when set, is a second opinion on
    GPUs; out_shape(shapes, params) is the result's shape.
    """

    name: str
    func: Callable
    func_: Callable
    prepare: Callable
    reference: Callable
    tolerance: Callable
    out_shape: Callable
    inplace_params: tuple = ()
    torch_reference: Optional[Callable] = None


@dataclass
class CaseResult:
    ok: bool
    max_err: float
    message: str


def case_seed(base_seed, *parts):
    """A per-case seed derived from the run's printed base seed."""
    return (base_seed + zlib.crc32("/".join(map(str, parts)).encode())) % 2**32


class _Checker:
    """Compares one form of the operator after another; keeps the first failure."""

    def __init__(self, lib):
        self.lib = lib
        self.ok, self.max_err, self.message = True, 0.0, ""

    def __call__(self, form, got, ref, tol, untouched=None):
        self.lib.synchronize()
        ok, err, msg = assertions.compare(self.lib.to_f64(got), ref, *tol)
        if ok and untouched is not None and not untouched():
            ok, msg = False, "wrote outside the output view"
        self.max_err = max(self.max_err, err)
        if not ok and self.ok:
            self.ok, self.message = False, f"{form}: {msg}"


def run_case(op, case, dtype, lib, backend, seed, torch_check=False, variant=None):
    """Checks `case` in every form of `op`: op(...), op_(out, ...), prepare + run +
    run_inputs (new data) + destroy right after. Each output starts NaN-poisoned.
    `variant`: the kernel variant every form runs (None: the plan's choice); a variant
    that cannot run the case raises OperatorRuntimeError with status ERR_NOT_SUPPORTED."""
    kw = {"backend": backend} if variant is None else {"backend": backend, "variant": variant}
    rng = np.random.default_rng(seed)
    dim = case.params.get("dim")
    nd = len(case.inputs[0].shape)
    spec_dim = dim % nd if isinstance(dim, int) and nd else None  # where -inf specials go

    def inputs():
        return [make_input(rng, lib, x.shape, dtype, x.layout, case.special, spec_dim)
                for x in case.inputs]

    def expected(arrays):
        arrays64 = [lib.to_f64(a) for a in arrays]
        ref = op.reference(*arrays64, **case.params)
        return assertions.round_to(ref, dtype), op.tolerance(dtype, arrays64, case.params)

    def output(arrays, shape):
        if case.inplace:
            return arrays[0], None
        return make_output(lib, shape, dtype, case.out_layout)

    ip = {k: v for k, v in case.params.items() if k in op.inplace_params}
    check = _Checker(lib)

    # op(...): the result is allocated by the package.
    xs = inputs()
    ref, tol = expected(xs)
    got = op.func(*xs, **case.params, **kw)
    if not isinstance(got, lib.array_type):
        return CaseResult(False, float("inf"), f"op: returned a {type(got).__name__}")
    check("op", got, ref, tol)
    if torch_check and op.torch_reference is not None:
        theirs = assertions.round_to(lib.to_f64(op.torch_reference(*xs, **case.params)), dtype)
        check("torch", got, theirs, tuple(2 * t for t in tol))
    if dim is None and "dim" in case.params:
        return CaseResult(check.ok, check.max_err, check.message)  # dim=None: op(...) only

    # op_(out, ...): into a poisoned output (or in place).
    out, untouched = output(xs, ref.shape)
    result = op.func_(out, *xs, **ip, **kw)
    if result is not out:
        return CaseResult(False, float("inf"), "op_: did not return out")
    check("op_", out, ref, tol, untouched)

    # prepare_op: run(), then run_inputs() on new data, then destroy right away.
    xs = inputs()
    ref, tol = expected(xs)
    out, untouched = output(xs, ref.shape)
    prepared = op.prepare(out, *xs, **ip, **kw)
    try:
        if prepared.run() is not out:
            return CaseResult(False, float("inf"), "prepare: run() did not return out")
        check("prepare.run", out, ref, tol, untouched)
        xs = inputs()
        ref, tol = expected(xs)
        out, untouched = output(xs, ref.shape)
        prepared.run_inputs(out, *xs)
    finally:
        prepared.destroy()
    check("prepare.run_inputs+destroy", out, ref, tol, untouched)
    return CaseResult(check.ok, check.max_err, check.message)


def run_error_case(err, lib, backend):
    """(ok, message): whether err.call raised err.error with a matching message."""
    try:
        err.call(lib, backend)
    except err.error as exc:
        if re.search(err.match, str(exc)):
            return True, f"{type(exc).__name__}: {exc}"
        return False, f"{type(exc).__name__} raised, but {str(exc)!r} does not match {err.match!r}"
    except Exception as exc:  # noqa: BLE001 (any other exception is the failure we report)
        return False, f"expected {err.error.__name__}, got {type(exc).__name__}: {exc}"
    return False, f"expected {err.error.__name__}, nothing was raised"
