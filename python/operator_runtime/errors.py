"""Exceptions raised by operator_runtime.

Python checks what it can before calling C (array types, dtypes, dims) and
raises TypeError / ValueError itself. Everything else is validated once, in C;
a failing C call raises OperatorRuntimeError with the status and the C
library's message. Invalid arguments found by C are also ValueError (and bad
dtypes TypeError), so `except ValueError` catches a bad shape wherever it was
detected.
"""

# Status codes of include/operator_runtime/api.h.
SUCCESS = 0
ERR_INVALID_ARG = 1
ERR_UNSUPPORTED_DTYPE = 2
ERR_RUNTIME = 3
ERR_INSUFFICIENT_WORKSPACE = 4
ERR_NOT_SUPPORTED = 5
ERR_BACKEND_UNAVAILABLE = 6

STATUS_NAMES = {
    SUCCESS: "OPRT_SUCCESS",
    ERR_INVALID_ARG: "OPRT_ERR_INVALID_ARG",
    ERR_UNSUPPORTED_DTYPE: "OPRT_ERR_UNSUPPORTED_DTYPE",
    ERR_RUNTIME: "OPRT_ERR_RUNTIME",
    ERR_INSUFFICIENT_WORKSPACE: "OPRT_ERR_INSUFFICIENT_WORKSPACE",
    ERR_NOT_SUPPORTED: "OPRT_ERR_NOT_SUPPORTED",
    ERR_BACKEND_UNAVAILABLE: "OPRT_ERR_BACKEND_UNAVAILABLE",
}


class OperatorRuntimeError(RuntimeError):
    """A failure reported by the C library (or a backend that is not available).

    `status` is the oprt_status_t value (None when the failure was found in
    Python, e.g. an unavailable Python-side backend); `message` is the text.
    """

    def __init__(self, message, status=None):
        super().__init__(message)
        self.status = status
        self.message = message


class InvalidArgumentError(OperatorRuntimeError, ValueError):
    """OPRT_ERR_INVALID_ARG: a shape, dim, layout or pointer the C API rejected."""


class UnsupportedDtypeError(OperatorRuntimeError, TypeError):
    """OPRT_ERR_UNSUPPORTED_DTYPE: a dtype the C API rejected."""


def error_from_status(status, message):
    """The exception for a failed C call."""
    name = STATUS_NAMES.get(status, f"status {status}")
    text = f"{message} [{name}]" if message else f"{name} (the C library gave no message)"
    if status == ERR_INVALID_ARG:
        return InvalidArgumentError(text, status)
    if status == ERR_UNSUPPORTED_DTYPE:
        return UnsupportedDtypeError(text, status)
    return OperatorRuntimeError(text, status)
