"""operator_runtime: Python bindings (ctypes) of the operator runtime's C API.

Every operator comes in three forms, e.g. softmax(src, dim=-1, out=None) returns its
result (a new array, or out= when given), softmax_(out, src, dim=-1) writes into out,
and prepare_softmax(out, src, dim=-1) returns a PreparedOp to run many times. Arrays
are numpy arrays (float32, float16, ml_dtypes.bfloat16) on the host, torch tensors,
CuPy arrays, or any object with __dlpack__ / __dlpack_device__ (CPU or CUDA memory).
Every function takes backend= "auto" (where the data lives), "cpu", "nvidia",
"metax" or "tilelang", and variant= a kernel variant of that backend (variants(op,
backend) lists them; None, the default, is the plan's choice). help() of each
function gives its dtypes, errors and an example.

As in numpy and PyTorch: reduce_sum(x) sums every element (dim= an int or a tuple of
ints for some dims); out= writes into a given array and returns it; a torch tensor
with the negative or conjugate bit (torch._neg_view(x), z.conj().imag) is read as the
values it stands for (an input is resolved into a temporary; as an output it is
refused). Arrays are otherwise passed as they are, never copied behind the caller's
back (the exceptions: those lazy torch views, and reduce_sum over several dims that
no view of src can merge, which copies src first). So strides must be non-negative: a
reversed view raises ValueError; pass a contiguous copy instead.

One-shot calls reuse the descriptor of a layout seen before (a bounded plan cache:
clear_plan_cache() empties it); with the compiled module operator_runtime._fastcall
(built with the library where Python's headers are found) such a call is one C call:
fast_call_info() says whether it is in use, and why not. set_num_threads(n) sets the
CPU backend's threads.
Importing the package imports no array library (numpy is imported on first use).
"""

import pathlib

from . import _backends, _lib, _native, ops
from . import _plan_cache
from ._backends import register_backend
from ._prepared import PreparedOp
from .errors import InvalidArgumentError, OperatorRuntimeError, UnsupportedDtypeError
from .ops import *  # noqa: F401,F403  (every operator's three forms: ops.__all__)


def _package_version():
    try:
        from ._version import version  # written into the installed package by the build
    except ImportError:  # imported from a source checkout: the same number, from CMakeLists.txt
        version = _lib.source_tree_version() or "0+unknown"
    return version


# The project(VERSION) of CMakeLists.txt, the one place it is written; the same
# as oprt_version() of a library built from the same tree (library_version()).
__version__ = _package_version()


def library_version() -> str:
    """oprt_version() of the loaded libcamp_ops.so (loading it if needed)."""
    return _lib.get().version()


def available_backends() -> "list[str]":
    """Backends that can run in this process, e.g. ["cpu"] or ["cpu", "nvidia"]."""
    return _backends.available_backends()


def variants(op: str, backend: str = "auto") -> "list[str]":
    """The kernel variants of operator `op` ("softmax", ...) on `backend`, plain to fastest
    (the last is the fastest), for the variant= keyword of every operator function.
    "student" comes first when an exercise is built in (scripts/camp.py exercise); a
    backend without a ladder lists "auto" (its plan's choice). backend="auto": the GPU
    backend of the loaded library when one has a device, else "cpu"."""
    return _backends.variants(op, backend)


def set_num_threads(n: int) -> None:
    """Sets how many threads the CPU backend may use, the calling one included
    (process-wide; oprt_set_num_threads). 0 restores the default: the CPUs this process
    may run on. Work under a few tens of thousands of elements always runs in the
    calling thread; idle workers sleep (they never spin), and a call never waits for a
    worker that has not started, so busy cores slow a call to one thread's speed at worst.
    ValueError for n < 0 or n > 1024."""
    import operator

    n = operator.index(n)
    if not 0 <= n <= 1024:
        raise ValueError(f"set_num_threads: n = {n} is outside 0..1024 (0: the default)")
    lib = _lib.get()
    lib.check(lib.c.oprt_set_num_threads(n))


def get_num_threads() -> int:
    """The number of threads the CPU backend uses now (set_num_threads, or the default)."""
    import ctypes

    lib = _lib.get()
    n = ctypes.c_int(0)
    lib.check(lib.c.oprt_get_num_threads(ctypes.byref(n)))
    return n.value


def clear_plan_cache() -> None:
    """Destroys the descriptors that one-shot calls keep for the layouts they saw (at most
    64; they are freed at interpreter exit anyway)."""
    _plan_cache.clear()


def fast_call_info() -> "dict[str, object]":
    """Whether one-shot calls on a layout seen before run through the compiled module
    operator_runtime._fastcall (one C call) or through ctypes (a few microseconds more):
    {"compiled": bool, "path": the module's file or None, "reason": why it is not in
    use, or None}. The module is built with libcamp_ops.so when CMake finds Python's
    development headers (Debian: python3-dev), for the Python that ran the build."""
    return _native.fast_call_info()


def library_path() -> "pathlib.Path":
    """The path of the loaded libcamp_ops.so (loading it if needed)."""
    return _lib.get().path


__all__ = [
    *ops.__all__,
    "OperatorRuntimeError", "InvalidArgumentError", "UnsupportedDtypeError", "PreparedOp",
    "available_backends", "clear_plan_cache", "fast_call_info", "get_num_threads", "library_path",
    "library_version", "register_backend", "set_num_threads", "variants",
]
