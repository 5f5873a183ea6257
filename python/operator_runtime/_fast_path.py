"""The one-shot fast path: plan cache keys and data pointers of plain numpy arrays and torch
tensors, read from their cheap attributes.

A one-shot call on arrays of a layout seen before needs no Operand: the cached descriptor
was made by a call on arrays of the same layout, which describe() checked then (a key is
cached only after its call succeeded). So the key must hold everything describe() and
the descriptor depend on, per array library:

- numpy: each array's exact class (the first one is np.ndarray itself, no subclass such
  as a masked array), dtype, shape and byte strides, and whether the output is writable
  (a read-only output is refused by the slow path).
- torch: each tensor's exact class (the first one is torch.Tensor itself, no subclass),
  dtype, shape, element strides, device and layout, whether the output requires grad
  (refused as an output by the slow path), and for CUDA tensors their device's current
  stream (the descriptor's workspace was allocated on it, and it is what the call is queued
  on, as torch queues its own ops on a tensor whichever device is current; the library
  launches on the device that holds the buffers).
  Tensors with the negative bit get no key (the slow path resolves such an input into a
  copy); the conjugate bit needs no check: torch sets it on complex tensors only, whose
  dtype (in the key) no cached plan has.

A new output (relu(x) without out=) is allocated like the first input, so its layout
follows from the inputs': the key says "new" in its place.

Anything else (CuPy, DLPack producers) gets no fast key and takes the slow path, which
describes every array. The caller adds the operator, backend, variant and parameters to
the key, and passes the arrays to C through the kind's readers_for(): a function of one
array, mapped over the arrays on a hit (numpy's buffer view and torch's data_ptr are C
functions: no Python frame per array).
"""

import ctypes
import operator
import sys

from . import _native
from ._arrays import numpy_dtype_code

# How the compiled hit path reads a new output's data pointer (fastcall.c's KIND_*).
KIND_NUMPY, KIND_TORCH = 1, 2

# A zero-length ctypes array over an array's memory (the buffer protocol): ctypes passes it
# as a pointer to that memory where the C function takes a void *. Made in C, in a fraction
# of the time __array_interface__ takes; exported only by writable C-contiguous arrays.
buffer_view = (ctypes.c_ubyte * 0).from_buffer


def interface_pointer(a):
    """A numpy array's data pointer (None for NULL), from __array_interface__ (any layout,
    read-only too)."""
    return a.__array_interface__["data"][0] or None


class NumpyFast:
    """Keys, pointers and new outputs of plain numpy arrays."""

    _layout = operator.attrgetter("__class__", "dtype", "shape", "strides")

    def __init__(self, np):
        self.np = np

    def key(self, arrays, new_out):
        """("new" for a new output, else whether the output is writable; then (class,
        dtype, shape, byte strides) of each given array), or None for an argument that is
        no array."""
        given = arrays[1:] if new_out else arrays
        try:
            return ("new" if new_out else arrays[0].flags.writeable, *map(self._layout, given))
        except AttributeError:
            return None

    @staticmethod
    def stream_of(key):
        return None

    @staticmethod
    def readers_for(arrays):
        """How to pass arrays laid out like `arrays` (same dtypes, shapes and strides) to C,
        and how when one is read-only: through the buffer protocol where each layout
        exports one (writable, contiguous, not empty, not bfloat16, which numpy cannot
        describe in a buffer), else by the pointer in __array_interface__."""
        if all(a.flags.c_contiguous and a.size and a.dtype.char in "fe" for a in arrays):
            return buffer_view, interface_pointer
        return interface_pointer, interface_pointer

    @staticmethod
    def supported(src, max_dims):
        """Whether src is of a dtype and rank the C API takes (else the slow path says
        what is wrong with it)."""
        return numpy_dtype_code(src.dtype) is not None and src.ndim <= max_dims

    def empty(self, src):
        """A new contiguous array of src's shape and dtype."""
        return self.np.empty(src.shape, src.dtype)

    def empty_for(self, src):
        """How to allocate a new output like each array of src's layout: empty()."""
        return self.empty

    def recipe(self, out, src):
        """How the compiled hit path allocates a new output like `out` (for every call
        whose inputs are laid out like this call's): numpy.empty(shape, dtype)."""
        return (self.np.empty, (out.shape, out.dtype), None, False, KIND_NUMPY)


class TorchFast:
    """Keys, pointers and new outputs of plain torch tensors (CPU or CUDA)."""

    _layout = operator.attrgetter("__class__", "dtype", "shape", "device", "layout")

    def __init__(self, torch):
        self.torch = torch
        tensor = torch.Tensor
        self._data_ptr = tensor.data_ptr
        self._stride = tensor.stride
        self._is_neg = tensor.is_neg
        self.strided = torch.strided
        self.contiguous = torch.contiguous_format
        self.dtypes = frozenset((torch.float32, torch.float16, torch.bfloat16))
        c = torch._C
        # A cheap query of a device's current stream (what torch's own compiled code
        # calls); torch.cuda.current_stream() costs microseconds.
        self.current_stream = getattr(c, "_cuda_getCurrentRawStream", None)

    def key(self, arrays, new_out):
        """("new" for a new output, else whether the output requires grad; the current
        CUDA stream (None on the CPU); (class, dtype, shape, device, layout) of each given
        tensor, then the strides of each), or None (see the module's docstring)."""
        given = arrays[1:] if new_out else arrays
        first = given[0]
        try:
            if any(map(self._is_neg, given)):
                return None
            layouts = (*map(self._layout, given), *map(self._stride, given))
        except (TypeError, RuntimeError):  # not a tensor; no strides (sparse, ...)
            return None
        stream = None
        if first.is_cuda:
            if self.current_stream is None:
                return None
            # The tensors' device's current stream, as torch's own ops use whichever device
            # is current; the library launches on the device that holds the buffers.
            stream = self.current_stream(first.get_device())
        return ("new" if new_out else first.requires_grad, stream, *layouts)

    @staticmethod
    def stream_of(key):
        return key[1]

    def readers_for(self, arrays):
        """How to pass tensors to C: their data pointer."""
        return self._data_ptr, self._data_ptr

    def supported(self, src, max_dims):
        return (src.dtype in self.dtypes and not (src.is_neg() or src.is_conj())
                and src.layout is self.strided and src.dim() <= max_dims
                and (src.is_cpu or src.is_cuda))

    def empty(self, src):
        """A new contiguous tensor of src's shape and dtype on its device (empty_like: a
        few times cheaper than torch.empty(shape, dtype=, device=))."""
        return self.torch.empty_like(src, memory_format=self.contiguous)

    def empty_for(self, src):
        """How to allocate a new output like each tensor of src's layout (its shape,
        strides, dtype and device), contiguous: torch.empty_like(src) itself, without the
        memory_format argument (a quarter cheaper), where src's strides are the contiguous
        ones (empty_like then copies them: src is dense), else empty()."""
        strides, step = [], 1
        for n in reversed(src.shape):
            strides.append(step)
            step *= n
        if step and src.stride() == tuple(reversed(strides)):
            return self.torch.empty_like
        return self.empty

    def recipe(self, out, src):
        """How the compiled hit path allocates a new output like `out` (for every call
        whose inputs are laid out like this call's): as empty_for(src) does when out is
        laid out like src would make it, else torch.empty(shape, dtype=, device=)."""
        torch = self.torch
        if src.shape == out.shape and src.dtype == out.dtype and src.device == out.device:
            if self.empty_for(src) is torch.empty_like:
                return (torch.empty_like, (), None, True, KIND_TORCH)
            return (torch.empty_like, (self.contiguous,), ("memory_format",), True, KIND_TORCH)
        return (torch.empty, (tuple(out.shape), out.dtype, out.device), ("dtype", "device"), False,
                KIND_TORCH)


_kinds = {}  # class -> NumpyFast, TorchFast or None (no fast path), filled on first sight


def kind_of(array):
    """The fast path of array's exact class (np.ndarray, torch.Tensor), or None."""
    t = type(array)
    try:
        return _kinds[t]
    except KeyError:
        pass
    kind = None
    np = sys.modules.get("numpy")
    torch = sys.modules.get("torch")
    if np is not None and t is np.ndarray:
        kind = NumpyFast(np)
        if _native.module is not None:
            _native.module.bind_numpy(np.ndarray)
    elif torch is not None and t is torch.Tensor:
        kind = TorchFast(torch)
        if _native.module is not None:
            # recent torch (2.11 has it): DLPack's C exchange table, one C call per tensor
            _native.module.bind_torch(torch.Tensor, kind.current_stream,
                                      getattr(torch.Tensor, "__dlpack_c_exchange_api__", None))
    return _kinds.setdefault(t, kind)
