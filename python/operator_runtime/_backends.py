"""Which backend runs a call.

"auto" runs where the data lives: host arrays on "cpu", GPU arrays on the GPU
backend of the loaded library. "cpu", "nvidia" and "metax" are backends of the
C library. Backends written in Python plug in with register_backend(). The
"tilelang" one (operator_runtime/_tilelang.py) is registered here the first time
it is asked for, when the tilelang package can be imported; otherwise asking
for it fails with the reason and the pip extra that installs it.
"""

from . import _lib
from .errors import OperatorRuntimeError

C_BACKENDS = ("cpu", "nvidia", "metax")
GPU_BACKENDS = ("nvidia", "metax")
PYTHON_BACKENDS = ("tilelang",)
NAMES = ("auto",) + C_BACKENDS + PYTHON_BACKENDS

_registered = {}


def register_backend(name, prepare):
    """Plugs in a backend implemented in Python.

    `prepare(op, arrays, params)` is called once per PreparedOp with the op
    name ("softmax", ...), the arrays (output first, as in prepare_<op>) and the
    op's parameters ({"dim": 1}, {"negative_slope": 0.1}, or {}); it returns a
    function `run(arrays)` that computes into arrays[0] for arrays of the same
    shapes, strides, dtype and device.
    """
    if name not in PYTHON_BACKENDS:
        raise ValueError(f"register_backend: name = {name!r}; Python backends: "
                         f"{', '.join(PYTHON_BACKENDS)}")
    _registered[name] = prepare


def python_backend(name):
    """The registered prepare function of a Python backend."""
    prepare = _registered.get(name)
    if prepare is None and name == "tilelang":
        from . import _tilelang

        # Its prepare function, or OperatorRuntimeError saying why not.
        prepare = _registered.setdefault(name, _tilelang.load())
    if prepare is None:
        raise OperatorRuntimeError(
            f"{name} backend is not available: no {name} implementation is registered in this "
            f"process (operator_runtime.register_backend({name!r}, ...)); use backend='auto', "
            f"'cpu', 'nvidia' or 'metax'")
    return prepare


def check_name(func, backend):
    if not isinstance(backend, str) or backend not in NAMES:
        raise ValueError(f"{func}: backend = {backend!r} is not one of {', '.join(NAMES)}")


def resolve(func, backend, operands):
    """The concrete backend for `operands` (already checked to share one device)."""
    check_name(func, backend)
    if backend in PYTHON_BACKENDS:
        python_backend(backend)
        return backend
    lib = _lib.get(prefer=backend)
    first = operands[0]
    if backend == "auto":
        if first.on_host:
            return "cpu"
        for gpu in GPU_BACKENDS:
            if lib.backend_is_available(_lib.BACKEND_CODES[gpu]):
                return gpu
        raise OperatorRuntimeError(
            f"{func}: {first.name} is on {first.device_string()} but {lib.path} has no GPU "
            f"backend with a device present (built without CAMP_ENABLE_NVIDIA / "
            f"CAMP_ENABLE_METAX?)")
    if not lib.backend_is_available(_lib.BACKEND_CODES[backend]):
        raise OperatorRuntimeError(
            f"{func}: backend '{backend}' is not available in {lib.path} (not built into it, or "
            f"no device present)")
    if (backend == "cpu") != first.on_host:
        where = "host memory" if backend == "cpu" else "GPU memory"
        raise ValueError(f"{func}: backend '{backend}' needs arrays in {where} but "
                         f"{first.name} is on {first.device_string()}")
    return backend


def available_backends():
    """The backends that can run now: "cpu", the built GPU backend with a device, Python ones."""
    lib = _lib.get()
    names = [b for b in C_BACKENDS if lib.backend_is_available(_lib.BACKEND_CODES[b])]
    return names + [b for b in PYTHON_BACKENDS if b in _registered]


def variants(op, backend="auto"):
    """operator_runtime.variants: the kernel variant names of `op` on `backend`."""
    check_name("variants", backend)
    if backend in PYTHON_BACKENDS:
        python_backend(backend)
        return ["auto"]
    lib = _lib.get(prefer=backend)
    if backend == "auto":
        backend = next((g for g in GPU_BACKENDS if lib.backend_is_available(_lib.BACKEND_CODES[g])),
                       "cpu")
    if op not in _lib.OP_SIGNATURES:
        raise ValueError(f"variants: op = {op!r} is not one of {', '.join(_lib.OP_SIGNATURES)}")
    return lib.variants(op, _lib.BACKEND_CODES[backend])
