"""Arrays as oprt_tensor_view_t: numpy arrays (host), torch tensors, CuPy arrays, and any
other object offering DLPack (__dlpack__ and __dlpack_device__).

Each array library is an `ArrayKind`: it describes an array (pointer, shape,
element strides, dtype, device), allocates results and workspaces next to it,
and gives the device context and stream to launch on. No array library is
imported here: numpy, torch, CuPy and ml_dtypes are looked up in sys.modules
when the caller passed one of their arrays (so they are imported already);
numpy is imported on first use where the package allocates a host array.

A torch tensor with its negative or conjugate bit set (torch._neg_view(x),
z.conj().imag) is a lazy view whose memory holds the values before negation:
as an input it is resolved into a temporary (resolve_neg / resolve_conj); it is
refused as an output and by prepare (a PreparedOp reads its arrays at every run).
"""

import sys

from ._lib import DTYPE_BF16, DTYPE_F16, DTYPE_F32, MAX_DIMS, TensorView

DTYPE_NAMES = {DTYPE_F32: "float32", DTYPE_F16: "float16", DTYPE_BF16: "bfloat16"}
# numpy dtype names (ml_dtypes registers "bfloat16") as C dtypes.
_NUMPY_DTYPES = {"float32": DTYPE_F32, "float16": DTYPE_F16, "bfloat16": DTYPE_BF16}
_SUPPORTED = "float32, float16 or bfloat16"

# How describe() treats an argument: the output (written), an input of a one-shot call
# or of run_inputs (read now), an input of prepare (read at every later run).
OUTPUT, INPUT, PREPARED_INPUT = "output", "input", "prepared input"

# DLPack device types (dlpack.h, DLDeviceType).
_DL_CPU, _DL_CUDA, _DL_CUDA_HOST, _DL_CUDA_MANAGED = 1, 2, 3, 13


def numpy():
    """The numpy module, imported on first use."""
    np = sys.modules.get("numpy")
    if np is None:
        import numpy as np
    return np


_dtype_codes = {}  # numpy dtype -> C dtype or None, filled on first sight (dtype.name is slow)


def numpy_dtype_code(dtype):
    """The C dtype of a numpy dtype, or None."""
    try:
        return _dtype_codes[dtype]
    except KeyError:
        code = _dtype_codes[dtype] = _numpy_dtype_uncached(dtype)
        return code


def _numpy_dtype_uncached(dtype):
    """A "bfloat16" is ml_dtypes' (the one numpy dtype of that name), and exists only once
    ml_dtypes is imported."""
    code = _NUMPY_DTYPES.get(dtype.name)
    if code is None or dtype.kind not in "fV" or not dtype.isnative:  # e.g. ">f4"
        return None
    if code == DTYPE_BF16:
        ml_dtypes = sys.modules.get("ml_dtypes")
        if ml_dtypes is None or dtype != ml_dtypes.bfloat16:
            return None
    return code


class Operand:
    """One array argument, described the way the C API sees it."""

    __slots__ = ("name", "array", "source", "kind", "dtype", "shape", "strides", "ptr",
                 "device", "readonly_reason")

    def __init__(self, name, array, kind, dtype, shape, strides, ptr, device, readonly_reason):
        self.name = name
        self.array = array  # what the C call reads or writes (a resolved or converted array)
        self.source = array  # what the caller passed (returned as the output)
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

    def without_arrays(self):
        """A copy that keeps no array alive (for descriptors kept in the plan cache)."""
        o = Operand(self.name, None, self.kind, self.dtype, self.shape, self.strides, 0,
                    self.device, self.readonly_reason)
        o.source = None
        return o


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

    def describe(self, func, name, a, role=INPUT):
        dtype = numpy_dtype_code(a.dtype)
        if dtype is None:
            raise TypeError(f"{func}: {name} has dtype {a.dtype}; supported: {_SUPPORTED}")
        strides = _element_strides(func, name, a.shape, a.strides, a.itemsize)
        readonly = None if a.flags.writeable else "is read-only (e.g. a np.broadcast_to view)"
        return Operand(name, a, self, dtype, a.shape, strides, a.__array_interface__["data"][0],
                       ("cpu", 0), readonly)

    def empty(self, like, shape):
        return numpy().empty(shape, dtype=like.array.dtype)

    def as_strided(self, like, shape, strides):
        """A view of like's array with element strides (the same first element)."""
        a = like.array
        return numpy().lib.stride_tricks.as_strided(
            a, shape, tuple(s * a.itemsize for s in strides), writeable=a.flags.writeable)

    def workspace(self, like, nbytes):
        buffer = numpy().empty(nbytes, dtype="uint8")
        return Workspace(buffer, buffer.__array_interface__["data"][0])

    def launch(self, device, workspace, fn):
        return fn(None)  # the CPU backend ignores the stream and runs synchronously

    def stream_key(self, device):
        return None


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
        # The current device's index: what torch.cuda.current_device() returns after its
        # lazy-init check (a tensor on the GPU exists here, so CUDA is initialized).
        self._current_device = getattr(torch._C, "_cuda_getDevice", None) \
            or (lambda: torch.cuda.current_device())

    def describe(self, func, name, t, role=INPUT):
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
        if t.is_neg() or t.is_conj():
            t = self._resolve(func, name, t, role)
        shape = tuple(t.shape)
        strides = _element_strides(func, name, shape, t.stride(), 1)
        # Writing into a tensor that requires grad would bypass autograd silently.
        readonly = "requires grad (operator_runtime does not record autograd)" \
            if t.requires_grad else None
        return Operand(name, t, self, dtype, shape, strides, t.data_ptr(), device, readonly)

    @staticmethod
    def _resolve(func, name, t, role):
        """An input with the negative or conjugate bit as a plain tensor (a copy with the
        values it stands for); an output or a prepared input refused."""
        bit = "negative" if t.is_neg() else "conjugate"
        what = (f"{func}: {name} has torch's {bit} bit set (a lazy view such as "
                f"torch._neg_view(x) or z.conj().imag, whose memory holds the values before "
                f"{'negation' if bit == 'negative' else 'conjugation'})")
        if role == OUTPUT:
            raise ValueError(f"{what}: it cannot be written; pass a plain tensor as the "
                             f"output")
        if role == PREPARED_INPUT:
            raise ValueError(f"{what}: a PreparedOp reads its arrays at every run; pass "
                             f"{name}.resolve_neg() (a copy), or use the one-shot function")
        return t.resolve_conj().resolve_neg()

    def _device(self, like):
        return self.torch.device(*like.device) if not like.on_host else self.torch.device("cpu")

    def empty(self, like, shape):
        return self.torch.empty(shape, dtype=like.array.dtype, device=self._device(like))

    def as_strided(self, like, shape, strides):
        return like.array.as_strided(shape, strides)

    def stream_key(self, device):
        return None if device[0] == "cpu" else (device[1], self._stream(device[1]))

    def workspace(self, like, nbytes):
        buffer = self.torch.empty(nbytes, dtype=self.torch.uint8, device=self._device(like))
        stream = None if like.on_host else self._stream(like.device[1])
        return Workspace(buffer, buffer.data_ptr(), stream)

    def launch(self, device, workspace, fn):
        if device[0] == "cpu":
            return fn(None)
        if self._current_device() != device[1]:  # the TileLang kernels launch on the current device
            with self.torch.cuda.device(device[1]):
                return self.launch(device, workspace, fn)
        stream = self._stream(device[1])
        if workspace is not None and stream != workspace.stream:
            # Once freed, the caching allocator may hand the workspace out again as soon as
            # the stream it was allocated on is done with it: tell it about this one too.
            workspace.buffer.record_stream(self.torch.cuda.current_stream())
        return fn(stream)


class _CupyKind:
    name = "cupy array"

    def __init__(self, cupy):
        self.cupy = cupy

    def describe(self, func, name, a, role=INPUT):
        dtype = numpy_dtype_code(numpy().dtype(a.dtype))
        if dtype is None:
            raise TypeError(f"{func}: {name} has dtype {a.dtype}; supported: {_SUPPORTED}")
        strides = _element_strides(func, name, a.shape, a.strides, a.itemsize)
        return Operand(name, a, self, dtype, tuple(a.shape), strides, a.data.ptr,
                       ("cuda", a.device.id), None)

    def empty(self, like, shape):
        with self.cupy.cuda.Device(like.device[1]):
            return self.cupy.empty(shape, dtype=like.array.dtype)

    def as_strided(self, like, shape, strides):
        a = like.array
        return self.cupy.lib.stride_tricks.as_strided(
            a, shape, tuple(s * a.itemsize for s in strides))

    def stream_key(self, device):
        with self.cupy.cuda.Device(device[1]):
            return (device[1], self.cupy.cuda.get_current_stream().ptr)

    def workspace(self, like, nbytes):
        # Plain cudaMalloc, not CuPy's pool: its cudaFree waits for the kernels that use it,
        # on whatever stream they ran, where a pooled block could be reused too early.
        with self.cupy.cuda.Device(like.device[1]):
            memory = self.cupy.cuda.Memory(nbytes)
        return Workspace(memory, memory.ptr)

    def launch(self, device, workspace, fn):
        with self.cupy.cuda.Device(device[1]):  # and its current stream
            return fn(self.cupy.cuda.get_current_stream().ptr)


NUMPY = _NumpyKind()
_kinds = {}


def _kind_of(array):
    t = type(array)
    package = t.__module__.partition(".")[0]
    module = sys.modules.get(package)
    if package == "numpy" and isinstance(array, module.ndarray):
        return NUMPY
    if package == "torch" and isinstance(array, module.Tensor):
        return _kinds.get("torch") or _kinds.setdefault("torch", _TorchKind(module))
    if package == "cupy" and isinstance(array, module.ndarray):
        return _kinds.get("cupy") or _kinds.setdefault("cupy", _CupyKind(module))
    np = sys.modules.get("numpy")  # a numpy subclass defined elsewhere
    if np is not None and isinstance(array, np.ndarray):
        return NUMPY
    return None


def _optional_module(name):
    """An importable module, or None."""
    module = sys.modules.get(name)
    if module is None:
        try:
            module = __import__(name)
        except Exception:  # ImportError, or a broken install
            return None
    return module


def _from_dlpack(func, name, obj):
    """A numpy array (host memory), torch tensor or CuPy array (CUDA memory) sharing obj's
    memory through DLPack; TypeError when none can take it."""
    try:
        device_type, device_id = obj.__dlpack_device__()
    except Exception as exc:
        raise TypeError(f"{func}: {name}.__dlpack_device__() failed ({type(exc).__name__}: "
                        f"{exc})") from None
    errors = []
    if device_type in (_DL_CPU, _DL_CUDA_HOST):
        importers = (("numpy", "from_dlpack"), ("torch", "from_dlpack"))
    elif device_type in (_DL_CUDA, _DL_CUDA_MANAGED):
        importers = (("torch", "from_dlpack"), ("cupy", "from_dlpack"))
    else:
        raise TypeError(f"{func}: {name} is a DLPack array on device type {device_type} "
                        f"(id {device_id}); supported: CPU and CUDA memory")
    for module_name, attr in importers:
        module = _optional_module(module_name)
        if module is None or not hasattr(module, attr):
            errors.append(f"{module_name}: not installed")
            continue
        try:
            return getattr(module, attr)(obj)
        except Exception as exc:  # e.g. numpy has no bfloat16 DLPack type
            errors.append(f"{module_name}.{attr}: {type(exc).__name__}: {exc}")
    raise TypeError(f"{func}: {name} is a DLPack array that could not be imported "
                    f"({'; '.join(errors)})")


def describe(func, name, array, role=INPUT):
    """The Operand for argument `name` of `func`; TypeError for anything but an array.
    `role`: OUTPUT, INPUT or PREPARED_INPUT (see the module's docstring)."""
    np = sys.modules.get("numpy")
    if np is not None and isinstance(array, np.ma.MaskedArray):  # a mask we would ignore
        raise TypeError(f"{func}: {name} is a numpy masked array, and operators do not honour "
                        f"masks; pass {name}.filled(value) or {name}.data explicitly")
    kind = _kind_of(array)
    if kind is not None:
        return kind.describe(func, name, array, role)
    if hasattr(array, "__dlpack__") and hasattr(array, "__dlpack_device__"):
        converted = _from_dlpack(func, name, array)
        operand = _kind_of(converted).describe(func, name, converted, role)
        if operand.kind is NUMPY:
            # numpy marks arrays imported through DLPack read-only for want of a flag in
            # older DLPack versions; the producer handed out its memory, to be written
            # when passed as an output.
            operand.readonly_reason = None
        operand.source = array
        return operand
    t = type(array)
    raise TypeError(f"{func}: {name} is a {t.__module__}.{t.__qualname__}; pass a numpy "
                    f"array, a torch tensor, a cupy array or an object with __dlpack__")


def describe_all(func, names, arrays, has_out, prepared=False, known=None):
    """Operands for one call: one array library, one dtype, one device; a writable output.
    has_out: the first array is the output. prepared: the inputs are read at every run of
    a PreparedOp (torch tensors with the negative bit are refused, not resolved).
    known: {index: Operand} of inputs the caller described already (as INPUT)."""
    role = PREPARED_INPUT if prepared else INPUT
    operands = [known[i] if known and i in known else
                describe(func, name, a, OUTPUT if has_out and i == 0 else role)
                for i, (name, a) in enumerate(zip(names, arrays))]
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
