"""Loads libcamp_ops.so and declares the C API (include/operator_runtime/*.h) for ctypes.

The library is looked for, in this order, and loaded once per process:
1. $CAMP_BUILD_DIR/libcamp_ops.so when CAMP_BUILD_DIR is set (and nowhere else);
2. the library installed inside this package by `pip install .` or `pip install -e .`;
3. in a source checkout (the package imported from <repo>/python), the first of
   <repo>/build-nvidia, <repo>/build-metax, <repo>/build-cpu that holds it
   (build-metax first when the first call asks for the metax backend).
"""

import ctypes
import os
import re
import sys
import threading
from pathlib import Path
from types import SimpleNamespace

from . import _manifest
from .errors import SUCCESS, OperatorRuntimeError, error_from_status

LIBRARY_NAME = "libcamp_ops.so"
REPO_ROOT = Path(__file__).resolve().parents[2]
DEFAULT_BUILD_DIRS = ("build-nvidia", "build-metax", "build-cpu")
# The one place the version is written (pyproject.toml reads it with the same pattern).
_CMAKE_VERSION = re.compile(r"project\(\s*operator_runtime\s+VERSION\s+([0-9]+\.[0-9]+\.[0-9]+)")

MAX_DIMS = 8

# oprt_dtype_t
DTYPE_F16 = 0
DTYPE_F32 = 1
DTYPE_BF16 = 2

# oprt_backend_t
BACKEND_AUTO = 0
BACKEND_NVIDIA = 1
BACKEND_METAX = 2
BACKEND_CPU = 3
BACKEND_CODES = {"auto": BACKEND_AUTO, "nvidia": BACKEND_NVIDIA, "metax": BACKEND_METAX,
                 "cpu": BACKEND_CPU}


class TensorView(ctypes.Structure):
    """oprt_tensor_view_t: strides count elements, not bytes."""

    _fields_ = [
        ("data", ctypes.c_void_p),
        ("dtype", ctypes.c_int),  # a C enum is an int
        ("ndim", ctypes.c_int32),
        ("shape", ctypes.c_int64 * MAX_DIMS),
        ("strides", ctypes.c_int64 * MAX_DIMS),
    ]


_c_status = ctypes.c_int
_view_p = ctypes.POINTER(TensorView)

_API_SIGNATURES = {
    "oprt_status_string": (ctypes.c_char_p, [ctypes.c_int]),
    "oprt_backend_string": (ctypes.c_char_p, [ctypes.c_int]),
    "oprt_dtype_string": (ctypes.c_char_p, [ctypes.c_int]),
    "oprt_set_backend": (_c_status, [ctypes.c_int]),
    "oprt_get_backend": (_c_status, [ctypes.POINTER(ctypes.c_int)]),
    "oprt_backend_is_available": (_c_status, [ctypes.c_int, ctypes.POINTER(ctypes.c_int)]),
    "oprt_last_error_message": (ctypes.c_char_p, []),
    "oprt_set_num_threads": (_c_status, [ctypes.c_int]),
    "oprt_get_num_threads": (_c_status, [ctypes.POINTER(ctypes.c_int)]),
}

# Per operator (ops/manifest.json): its input count and the C type of its trailing scalar
# argument (relu: negative_slope; reduce_sum and softmax: axis), or None.
_CTYPES = {"float": ctypes.c_float, "int64_t": ctypes.c_int64}


def _signature(entry):
    if len(entry.params) > 1:
        raise OperatorRuntimeError(f"{entry.name}: the bindings take at most one scalar "
                                   f"parameter, the manifest lists {len(entry.params)}")
    return len(entry.inputs), (_CTYPES[entry.params[0].c_type] if entry.params else None)


OP_SIGNATURES = {entry.name: _signature(entry) for entry in _manifest.load()}


class OpFunctions:
    """The lifecycle functions of one operator (and its kernel-name query), with their C
    signatures."""

    def __init__(self, dll, name):
        num_inputs, scalar = OP_SIGNATURES[name]
        self.name = name
        self.num_inputs = num_inputs
        self.scalar_type = scalar
        views = [_view_p] * (1 + num_inputs)
        self.create = _bind(dll, f"oprt_create_{name}_descriptor", _c_status,
                            [ctypes.POINTER(ctypes.c_void_p), *views] + ([scalar] if scalar else []))
        self.workspace_size = _bind(dll, f"oprt_get_{name}_workspace_size", _c_status,
                                    [ctypes.c_void_p, ctypes.POINTER(ctypes.c_size_t)])
        self.execute = _bind(dll, f"oprt_execute_{name}", _c_status,
                             [ctypes.c_void_p, ctypes.c_void_p, ctypes.c_size_t]
                             + [ctypes.c_void_p] * (1 + num_inputs) + [ctypes.c_void_p])
        # The same C function without argtypes: its arguments must be ctypes objects (or
        # None), passed as they are, with none of the conversions that cost a third of a
        # call. The plan cache's numpy fast path passes buffer views to it (_fast_path).
        self.execute_untyped = dll[f"oprt_execute_{name}"]  # a new function object
        self.execute_untyped.restype = _c_status
        # The operand checks of execute alone, for the Python backends' own kernels.
        self.check_execute = _bind(dll, f"oprt_check_{name}_execute", _c_status,
                                   [ctypes.c_void_p] * (2 + num_inputs))
        self.destroy = _bind(dll, f"oprt_destroy_{name}_descriptor", _c_status, [ctypes.c_void_p])
        self.kernel_name = _bind(dll, f"oprt_get_{name}_kernel_name", _c_status,
                                 [ctypes.c_void_p, ctypes.POINTER(ctypes.c_char_p)])
        self.list_variants = _bind(dll, f"oprt_list_{name}_variants", _c_status,
                                   [ctypes.c_int, ctypes.POINTER(ctypes.c_char_p), ctypes.c_int,
                                    ctypes.POINTER(ctypes.c_int)])
        self.set_variant = _bind(dll, f"oprt_set_{name}_variant", _c_status,
                                 [ctypes.c_void_p, ctypes.c_char_p])


def _bind(dll, symbol, restype, argtypes):
    fn = getattr(dll, symbol)  # AttributeError when the library lacks it
    fn.restype = restype
    fn.argtypes = argtypes
    return fn


class Library:
    """One loaded libcamp_ops.so; `c` holds the raw C functions under their C names."""

    def __init__(self, path):
        self.path = Path(path)
        self.dll = ctypes.CDLL(str(self.path))
        try:
            self.c = SimpleNamespace(**{symbol: _bind(self.dll, symbol, restype, argtypes)
                                        for symbol, (restype, argtypes) in _API_SIGNATURES.items()})
        except AttributeError as exc:
            raise OperatorRuntimeError(f"{self.path} is not an operator runtime library: {exc}")
        self._ops = {}
        self._ops_lock = threading.Lock()
        self._available = {}

    def op(self, name):
        """The C functions of operator `name`, bound on first use."""
        functions = self._ops.get(name)
        if functions is None:
            with self._ops_lock:
                try:
                    functions = self._ops.setdefault(name, OpFunctions(self.dll, name))
                except AttributeError as exc:
                    raise OperatorRuntimeError(
                        f"{self.path} lacks the {name} operator ({exc}); {rebuild_hint(self.path)}")
        return functions

    def variants(self, name, backend_code):
        """oprt_list_<name>_variants: the variant names of operator `name` on a backend."""
        fns = self.op(name)
        count = ctypes.c_int(0)
        self.check(fns.list_variants(backend_code, None, 0, ctypes.byref(count)))
        names = (ctypes.c_char_p * max(count.value, 1))()
        self.check(fns.list_variants(backend_code, names, count.value, ctypes.byref(count)))
        return [names[i].decode() for i in range(count.value)]

    def check(self, status):
        """Raises the error of a failed C call, with the library's thread-local message."""
        if status != SUCCESS:
            message = self.c.oprt_last_error_message().decode(errors="replace")
            raise error_from_status(status, message)

    def version(self):
        """oprt_version(): the version the library was built as."""
        fn = getattr(self.dll, "oprt_version", None)
        if fn is None:
            raise OperatorRuntimeError(f"{self.path} predates oprt_version(); rebuild the library")
        fn.restype = ctypes.c_char_p
        fn.argtypes = []
        return fn().decode()

    def set_backend(self, code):
        self.check(self.c.oprt_set_backend(code))

    def backend_is_available(self, code):
        """Whether a backend is built in and has a device (asked once per backend: a
        process's devices do not change)."""
        available = self._available.get(code)
        if available is None:
            flag = ctypes.c_int(0)
            self.check(self.c.oprt_backend_is_available(code, ctypes.byref(flag)))
            available = self._available.setdefault(code, bool(flag.value))
        return available


_lock = threading.Lock()
_library = None


def in_source_tree():
    """Whether this package is imported from a source checkout (<repo>/python)."""
    return (Path(__file__).resolve().parent.parent.name == "python"
            and (REPO_ROOT / "CMakeLists.txt").is_file())


def source_tree_version():
    """project(VERSION) of the checkout's CMakeLists.txt, or None outside a checkout."""
    if not in_source_tree():
        return None
    match = _CMAKE_VERSION.search((REPO_ROOT / "CMakeLists.txt").read_text())
    return match.group(1) if match else None


def rebuild_hint(path):
    """How to bring the library at `path` up to date: its build script when it is one of
    the checkout's build folders (the first of them that exists is the one loaded, so a
    newer build-cpu/ stays unused while an older build-nvidia/ exists)."""
    folder = Path(path).parent
    if in_source_tree() and folder.parent == REPO_ROOT and folder.name in DEFAULT_BUILD_DIRS:
        variant = folder.name[len("build-"):]
        return (f"rebuild it (bash scripts/build_{variant}.sh build), or set CAMP_BUILD_DIR to the "
                f"build folder you rebuilt (e.g. CAMP_BUILD_DIR=build-cpu)")
    return "rebuild the library"


def package_library_paths():
    """Where an installed library sits: the package's own folders (an editable
    install adds the install tree to the package's __path__)."""
    package = sys.modules[__package__]
    return [Path(p) / LIBRARY_NAME for p in package.__path__]


def _search_paths(prefer):
    env = os.environ.get("CAMP_BUILD_DIR")
    if env:
        return [Path(env).expanduser() / LIBRARY_NAME]
    paths = package_library_paths()
    if in_source_tree():
        dirs = list(DEFAULT_BUILD_DIRS)
        if prefer == "metax":
            dirs.remove("build-metax")
            dirs.insert(0, "build-metax")
        paths += [REPO_ROOT / d / LIBRARY_NAME for d in dirs]
    return paths


def get(prefer=None):
    """The process's library, loaded on first use (`prefer`: the backend first asked for)."""
    global _library
    if _library is None:
        with _lock:
            if _library is None:
                candidates = _search_paths(prefer)
                found = next((p for p in candidates if p.is_file()), None)
                if found is None:
                    where = ", ".join(str(p) for p in candidates)
                    raise OperatorRuntimeError(
                        f"{LIBRARY_NAME} not found (looked for {where}); install the package "
                        f"with `pip install .`, or build it with scripts/build_cpu.sh (or "
                        f"build_nvidia.sh / build_metax.sh), or set CAMP_BUILD_DIR to the "
                        f"build folder")
                _library = Library(found)
    return _library
