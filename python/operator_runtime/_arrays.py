"""Arrays as oprt_tensor_view_t: numpy arrays (host), torch tensors and CuPy arrays.

Each array library is an `ArrayKind`: it describes an array (pointer, shape,
element strides, dtype, device), allocates results and workspaces next to it,
and gives the device context and stream to launch on. Torch and CuPy are only
imported when the caller already passed one of their arrays.
"""

import sys

import ml_dtypes
import numpy as np

from ._lib import DTYPE_BF16, DTYPE_F16, DTYPE_F32, MAX_DIMS, TensorView

DTYPE_NAMES = {DTYPE_F32: "float32", DTYPE_F16: "float16", DTYPE_BF16: "bfloat16"}
_NUMPY_DTYPES = {
    np.dtype(np.float32): DTYPE_F32,
    np.dtype(np.float16): DTYPE_F16,
    np.dtype(ml_dtypes.bfloat16): DTYPE_BF16,
}
_SUPPORTED = "float32, float16 or bfloat16"


class Operand:
    """One array argument, described the way the C API sees it."""

    __slots__ = ("name", "array", "kind", "dtype", "shape", "strides", "ptr", "device",
                 "readonly_reason")

    def __init__(self, name, array, kind, dtype, shape, strides, ptr, device, readonly_reason):
        self.name = name
        self.array = array
        self.kind = kind
        self.dtype = dtype  # oprt_dtype_t value
        self.shape = shape
        self.strides = strides  # in elements, >= 0
        self.ptr = ptr
        self.device = device  # ("cpu", 0) or ("cuda", index)
        self.readonly_reason = readonly_reason  # why it cannot be an output, or None

    @property
    def ndim(self):
        return len(self.shape)

    @property
    def on_host(self):
        return self.device[0] == "cpu"

    def device_string(self):
        return "cpu" if self.on_host else f"{self.device[0]}:{self.device[1]}"

    def view(self):
        view = TensorView()
        view.data = self.ptr or None
        view.dtype = self.dtype
        view.ndim = len(self.shape)
        for d, (size, stride) in enumerate(zip(self.shape, self.strides)):
            view.shape[d] = size
            view.strides[d] = stride
        return view

    def layout(self):
        """What a prepared descriptor depends on: same layout, same descriptor."""
        return (self.kind, self.dtype, self.shape, self.strides, self.device)


def _element_strides(func, name, shape, strides, itemsize):
    """Byte (numpy, CuPy) or element (torch, itemsize 1) strides as C element strides."""
    if len(shape) > MAX_DIMS:
        raise ValueError(f"{func}: {name} has {len(shape)} dims; at most {MAX_DIMS} are supported")
    if 0 in shape:  # no element is ever addressed
        return (0,) * len(shape)
    out = []
    for d, (size, stride) in enumerate(zip(shape, strides)):
        if size == 1:  # never stepped over, and numpy leaves arbitrary values here
            out.append(0)
            continue
        if stride < 0:
            raise ValueError(
                f"{func}: {name} has a negative stride in dim {d} (a reversed view); the C API "
                f"takes strides >= 0: pass a contiguous copy (e.g. np.ascontiguousarray)")
        if stride % itemsize:
            raise ValueError(f"{func}: {name} has a stride of {stride} bytes in dim {d}, not a "
                             f"multiple of its {itemsize}-byte elements")
        out.append(stride // itemsize)
    return tuple(out)


class Workspace:
    """A workspace buffer, its address, and the stream it was allocated on (torch only)."""

    __slots__ = ("buffer", "ptr", "stream")

    def __init__(self, buffer, ptr, stream=None):
        self.buffer = buffer
        self.ptr = ptr
        self.stream = stream


class _NumpyKind:
    name = "numpy array"

    def describe(self, func, name, a):
        dtype = _NUMPY_DTYPES.get(a.dtype)
        if dtype is None:
            raise TypeError(f"{func}: {name} has dtype {a.dtype}; supported: {_SUPPORTED}")
        strides = _element_strides(func, name, a.shape, a.strides, a.itemsize)
        readonly = None if a.flags.writeable else "is read-only (e.g. a np.broadcast_to view)"
        return Operand(name, a, self, dtype, a.shape, strides, a.__array_interface__["data"][0],
                       ("cpu", 0), readonly)

    def empty(self, like, shape):
        return np.empty(shape, dtype=like.array.dtype)

    def workspace(self, like, nbytes):
        buffer = np.empty(nbytes, dtype=np.uint8)
        return Workspace(buffer, buffer.__array_interface__["data"][0])

    def launch(self, device, workspace, fn):
        return fn(None)  # the CPU backend ignores the stream and runs synchronously


class _TorchKind:
    name = "torch tensor"

    def __init__(self, torch):
        self.torch = torch
        self.dtypes = {torch.float32: DTYPE_F32, torch.float16: DTYPE_F16,
                       torch.bfloat16: DTYPE_BF16}
        # The current stream's handle: torch's private fast path (0.1 us, used by Triton
        # and Inductor) where it exists; torch.cuda.current_stream() costs about 8 us.
        raw = getattr(torch._C, "_cuda_getCurrentRawStream", None)
        self._stream = raw or (lambda index: torch.cuda.current_stream(index).cuda_stream)

    def describe(self, func, name, t):
        if t.layout != self.torch.strided:
            raise TypeError(f"{func}: {name} is a {t.layout} tensor; only strided tensors are "
                            f"supported")
        dtype = self.dtypes.get(t.dtype)
        if dtype is None:
            raise TypeError(f"{func}: {name} has dtype {t.dtype}; supported: {_SUPPORTED}")
        if t.device.type == "cpu":
            device = ("cpu", 0)
        elif t.device.type == "cuda":
            device = ("cuda", t.device.index if t.device.index is not None else 0)
        else:
            raise ValueError(f"{func}: {name} is on device '{t.device}'; supported: cpu, cuda")
        shape = tuple(t.shape)
        strides = _element_strides(func, name, shape, t.stride(), 1)
        # Writing into a tensor that requires grad would bypass autograd silently.
        readonly = "requires grad (operator_runtime does not record autograd)" \
            if t.requires_grad else None
        return Operand(name, t, self, dtype, shape, strides, t.data_ptr(), device, readonly)

    def _device(self, like):
        return self.torch.device(*like.device) if not like.on_host else self.torch.device("cpu")

    def empty(self, like, shape):
        return self.torch.empty(shape, dtype=like.array.dtype, device=self._device(like))

    def workspace(self, like, nbytes):
        buffer = self.torch.empty(nbytes, dtype=self.torch.uint8, device=self._device(like))
        stream = None if like.on_host else self._stream(like.device[1])
        return Workspace(buffer, buffer.data_ptr(), stream)

    def launch(self, device, workspace, fn):
        if device[0] == "cpu":
            return fn(None)
        cuda = self.torch.cuda
        if cuda.current_device() != device[1]:  # the C library launches on the current device
            with cuda.device(device[1]):
                return self.launch(device, workspace, fn)
        stream = self._stream(device[1])
        if workspace is not None and stream != workspace.stream:
            # Once freed, the caching allocator may hand the workspace out again as soon as
            # the stream it was allocated on is done with it: tell it about this one too.
            workspace.buffer.record_stream(cuda.current_stream())
        return fn(stream)


class _CupyKind:
    name = "cupy array"

    def __init__(self, cupy):
        self.cupy = cupy

    def describe(self, func, name, a):
        dtype = _NUMPY_DTYPES.get(np.dtype(a.dtype))
        if dtype is None:
            raise TypeError(f"{func}: {name} has dtype {a.dtype}; supported: {_SUPPORTED}")
        strides = _element_strides(func, name, a.shape, a.strides, a.itemsize)
        return Operand(name, a, self, dtype, tuple(a.shape), strides, a.data.ptr,
                       ("cuda", a.device.id), None)

    def empty(self, like, shape):
        with self.cupy.cuda.Device(like.device[1]):
            return self.cupy.empty(shape, dtype=like.array.dtype)

    def workspace(self, like, nbytes):
        # Plain cudaMalloc, not CuPy's pool: its cudaFree waits for the kernels that use it,
        # on whatever stream they ran, where a pooled block could be reused too early.
        with self.cupy.cuda.Device(like.device[1]):
            memory = self.cupy.cuda.Memory(nbytes)
        return Workspace(memory, memory.ptr)

    def launch(self, device, workspace, fn):
        with self.cupy.cuda.Device(device[1]):  # the C library launches on the current device
            return fn(self.cupy.cuda.get_current_stream().ptr)


NUMPY = _NumpyKind()
_kinds = {}


def _kind_of(array):
    if isinstance(array, np.ndarray):
        return NUMPY
    package = type(array).__module__.partition(".")[0]
    module = sys.modules.get(package)
    if package == "torch" and isinstance(array, module.Tensor):
        kind = _kinds.get("torch") or _kinds.setdefault("torch", _TorchKind(module))
    elif package == "cupy" and isinstance(array, module.ndarray):
        kind = _kinds.get("cupy") or _kinds.setdefault("cupy", _CupyKind(module))
    else:
        return None
    return kind


def describe(func, name, array):
    """The Operand for argument `name` of `func`; TypeError for anything but an array we know."""
    if isinstance(array, np.ma.MaskedArray):  # an ndarray subclass whose mask we would ignore
        raise TypeError(f"{func}: {name} is a numpy masked array, and operators do not honour "
                        f"masks; pass {name}.filled(value) or {name}.data explicitly")
    kind = _kind_of(array)
    if kind is None:
        t = type(array)
        raise TypeError(f"{func}: {name} is a {t.__module__}.{t.__qualname__}; pass a numpy "
                        f"array, a torch tensor or a cupy array (torch.from_dlpack / "
                        f"cupy.from_dlpack wrap other DLPack arrays without a copy)")
    return kind.describe(func, name, array)


def describe_all(func, names, arrays, has_out):
    """Operands for one call: one array library, one dtype, one device; a writable output."""
    operands = [describe(func, name, a) for name, a in zip(names, arrays)]
    first = operands[0]
    for o in operands[1:]:
        if o.kind is not first.kind:
            raise TypeError(f"{func}: {o.name} is a {o.kind.name} but {first.name} is a "
                            f"{first.kind.name}")
        if o.dtype != first.dtype:
            raise TypeError(f"{func}: {o.name} has dtype {DTYPE_NAMES[o.dtype]} but {first.name} "
                            f"has {DTYPE_NAMES[first.dtype]}")
        if o.device != first.device:
            raise ValueError(f"{func}: {o.name} is on {o.device_string()} but {first.name} is on "
                             f"{first.device_string()}")
    if has_out and first.readonly_reason:
        raise ValueError(f"{func}: {first.name} {first.readonly_reason} and cannot be written")
    return operands
