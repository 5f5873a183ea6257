"""Shared pieces of the operator functions' docstrings (help(operator_runtime.relu), ...)."""

import textwrap

ARRAYS = """\
    Arrays: numpy arrays (host memory; float32, float16, ml_dtypes.bfloat16), torch
    tensors (CPU or CUDA), CuPy arrays, or any object with __dlpack__ and
    __dlpack_device__ (imported without a copy through numpy / torch / CuPy). All
    arrays of a call share one library, one dtype and one device. Strides must be
    non-negative (a reversed view raises ValueError). A torch tensor with the negative
    or conjugate bit (torch._neg_view(x), z.conj().imag) is resolved into a temporary
    as an input; it is refused as an output and by prepare_*."""

BACKENDS = """\
    backend: "auto" (the default: host arrays on "cpu", GPU arrays on the GPU backend
    of the loaded library), "cpu", "nvidia", "metax" or "tilelang" (torch CUDA
    tensors; needs the tilelang package).
    variant: a kernel variant of that backend (operator_runtime.variants(op, backend)
    lists them, plain to fastest); None, the default, is the plan's choice."""

ERRORS = """\
    Raises TypeError (not an array, unsupported dtype, mixed libraries or dtypes),
    ValueError (shapes that do not fit, a read-only or overlapping output, a bad dim
    or backend name), operator_runtime.OperatorRuntimeError (and its subclasses
    InvalidArgumentError, UnsupportedDtypeError) for what the C library refuses or a
    backend that is not available."""

FORMS = """\
    Forms: {op}(...) returns a new array (or writes into out= and returns it);
    {op}_(out, ...) writes into out and returns it; prepare_{op}(out, ...) returns a
    PreparedOp to run many times. One-shot calls reuse the descriptor of a layout seen
    before (the plan cache): a repeated call on small arrays costs a few microseconds."""


def document(op, summary, example, extra=""):
    """The full docstring of op's out-of-place function (every block flush left, the
    example's lines indented under "Example:")."""
    parts = [summary, extra, FORMS.format(op=op), ARRAYS, BACKENDS, ERRORS,
             "Example:\n" + textwrap.indent(textwrap.dedent(example).strip(), "    ")]
    return "\n\n".join(textwrap.dedent(p).strip() for p in parts if p.strip()) + "\n"
