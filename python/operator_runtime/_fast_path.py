"""The one-shot fast path: plan cache keys and data pointers of plain numpy arrays and torch
tensors, read from their cheap attributes.

A one-shot call on arrays of a layout seen before needs no Operand: the cached descriptor
was made for arrays with the same dtype, shape, strides and device, which describe()
checked then. What the key must hold, per array library:

- numpy: the exact type np.ndarray (no subclass, no masked array), dtype, shape, byte
  strides, and whether the output is writable (a read-only output is refused by the slow
  path, so such a key is never cached).
- torch: the exact type torch.Tensor (no subclass, e.g. nn.Parameter), a strided layout,
  neither the negative nor the conjugate bit (such inputs are resolved into a copy by the
  slow path), dtype, shape, element strides, CPU or CUDA device index, whether the output
  requires grad, and for CUDA tensors the current stream (the descriptor's workspace was
  allocated on it, and it is what the call is queued on). A CUDA call on a device other
  than the current one takes the slow path (it switches device for the launch).

Anything else (CuPy, DLPack producers, mixed libraries) gets no fast key and takes the slow
path, which describes every array. The caller adds the operator, backend, variant and
parameters to the key, and passes the arrays to C through the kind's reader_for(): a
function of one array, called in C (map) on a hit, with no Python frame per array.
"""

import ctypes
import sys

from ._arrays import numpy_dtype_code

# A zero-length ctypes array over an array's memory (the buffer protocol): ctypes passes it
# as a pointer to that memory where the C function takes a void *. Made in C, in a fraction
# of the time __array_interface__ takes; exported only by writable C-contiguous arrays.
_buffer_view = (ctypes.c_ubyte * 0).from_buffer


def interface_pointer(a):
    """A numpy array's data pointer (None for NULL), from __array_interface__ (any layout,
    read-only too)."""
    return a.__array_interface__["data"][0] or None


class NumpyFast:
    """Keys, pointers and results of plain numpy arrays."""

    tag = "numpy"

    def __init__(self, np):
        self.np = np
        self.ndarray = np.ndarray

    def key(self, arrays, new_out):
        """(whether the output is writable, or "new" for a new output; (dtype, shape,
        strides) of each given array), or None when one is not a plain numpy array."""
        ndarray = self.ndarray
        given = arrays[1:] if new_out else arrays
        for a in given:
            if type(a) is not ndarray:
                return None
        return ("new" if new_out else arrays[0].flags.writeable,
                *[(a.dtype, a.shape, a.strides) for a in given])

    @staticmethod
    def stream_of(key):
        return None

    @staticmethod
    def reader_for(arrays):
        """How to pass arrays laid out like `arrays` (same dtypes, shapes and strides) to C:
        through the buffer protocol where each layout exports one (contiguous, not empty,
        not bfloat16, which numpy cannot describe in a buffer), else by the pointer in
        __array_interface__ (a read-only array, found when the buffer is refused, too)."""
        if all(a.flags.c_contiguous and a.size and a.dtype.char in "fe" for a in arrays):
            return _buffer_view
        return interface_pointer

    @staticmethod
    def supported(src, max_dims):
        """Whether src is of a dtype and rank the C API takes (else the slow path says
        what is wrong with it)."""
        return numpy_dtype_code(src.dtype) is not None and src.ndim <= max_dims

    def empty(self, src):
        """A new contiguous array of src's shape and dtype."""
        return self.np.empty(src.shape, src.dtype)


class TorchFast:
    """Keys, pointers and results of plain torch tensors (CPU or CUDA)."""

    tag = "torch"

    def __init__(self, torch):
        self.torch = torch
        self.tensor = torch.Tensor
        self._data_ptr = torch.Tensor.data_ptr
        self.strided = torch.strided
        self.contiguous = torch.contiguous_format
        self.dtypes = frozenset((torch.float32, torch.float16, torch.bfloat16))
        c = torch._C
        # Cheap queries of the current device and stream (what torch's own compiled code
        # calls); the public torch.cuda functions cost microseconds.
        self.current_device = getattr(c, "_cuda_getDevice", None)
        self.current_stream = getattr(c, "_cuda_getCurrentRawStream", None)

    def reader_for(self, arrays):
        """How to pass tensors to C: their data pointer."""
        return self._data_ptr

    def key(self, arrays, new_out):
        """(whether the output requires grad, or "new" for a new output; the current CUDA
        stream (None on the CPU); (dtype, shape, strides, device, layout) of each given
        tensor), or None when one is not a plain tensor, or the first is a CUDA tensor on
        another device than the current one."""
        tensor = self.tensor
        given = arrays[1:] if new_out else arrays
        for t in given:
            if type(t) is not tensor or t.is_neg() or t.is_conj():
                return None
        first = given[0]
        stream = None
        if first.is_cuda:
            device = first.get_device()
            if (self.current_device is None or self.current_stream is None
                    or self.current_device() != device):
                return None
            stream = self.current_stream(device)
        try:
            layouts = [(t.dtype, t.shape, t.stride(), t.device, t.layout) for t in given]
        except RuntimeError:  # a layout without strides (sparse, ...): the slow path says so
            return None
        return ("new" if new_out else first.requires_grad, stream, *layouts)

    @staticmethod
    def stream_of(key):
        return key[1]

    def supported(self, src, max_dims):
        return (src.dtype in self.dtypes and not (src.is_neg() or src.is_conj())
                and src.layout is self.strided and src.dim() <= max_dims
                and (src.is_cpu or src.is_cuda))

    def empty(self, src):
        """A new contiguous tensor of src's shape and dtype on its device (empty_like: a
        few times cheaper than torch.empty(shape, dtype=, device=))."""
        return self.torch.empty_like(src, memory_format=self.contiguous)


_kinds = {}  # type -> NumpyFast, TorchFast or None (no fast path), filled on first sight


def kind_of(array):
    """The fast path of array's exact type, or None."""
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
    elif torch is not None and t is torch.Tensor:
        kind = TorchFast(torch)
    return _kinds.setdefault(t, kind)
