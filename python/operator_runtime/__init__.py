"""operator_runtime: Python bindings (ctypes) of the operator runtime's C API.

Every operator comes in three forms, e.g. softmax(src, dim=-1) allocates its
result, softmax_(out, src, dim=-1) writes into out, and prepare_softmax(out,
src, dim=-1) returns a PreparedOp to run many times. Arrays are numpy arrays
(float32, float16, ml_dtypes.bfloat16) on the host, or torch tensors / CuPy
arrays. Every function takes backend= "auto" (where the data lives), "cpu",
"nvidia", "metax" or "tilelang", and variant= a kernel variant of that backend
(variants(op, backend) lists them; None, the default, is the plan's choice).

Arrays are passed as they are, never copied behind the caller's back (the one
exception: reduce_sum(src, dim=None) reduces src.reshape(-1), a copy when src
cannot be viewed as 1-d). So strides must be non-negative: a reversed view
raises ValueError; pass a contiguous copy instead.
"""

from . import _backends, _lib, ops
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


def library_version():
    """oprt_version() of the loaded libcamp_ops.so (loading it if needed)."""
    return _lib.get().version()


def available_backends():
    """Backends that can run in this process, e.g. ["cpu"] or ["cpu", "nvidia"]."""
    return _backends.available_backends()


def variants(op, backend="auto"):
    """The kernel variants of operator `op` ("softmax", ...) on `backend`, plain to fastest
    (the last is the fastest), for the variant= keyword of every operator function.
    "student" comes first when an exercise is built in (scripts/camp.py exercise); a
    backend without a ladder lists "auto" (its plan's choice). backend="auto": the GPU
    backend of the loaded library when one has a device, else "cpu"."""
    return _backends.variants(op, backend)


def library_path():
    """The path of the loaded libcamp_ops.so (loading it if needed)."""
    return _lib.get().path


__all__ = [
    *ops.__all__,
    "OperatorRuntimeError", "InvalidArgumentError", "UnsupportedDtypeError", "PreparedOp",
    "available_backends", "library_path", "library_version", "register_backend", "variants",
]
