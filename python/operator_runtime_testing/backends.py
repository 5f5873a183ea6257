"""Choosing the backend and the array library that tests and benchmarks run with."""

from dataclasses import dataclass
from typing import Optional

from .arrays import NUMPY, TorchLib

GPU_BACKENDS = ("nvidia", "metax")


@dataclass
class Target:
    backend: str  # what the calls pass as backend=
    resolved: str  # where they run
    lib: object  # the array library of their arrays (NumpyLib / TorchLib)
    skip_reason: Optional[str] = None  # set when this target cannot run here

    @property
    def on_gpu(self):
        return self.resolved != "cpu"


def _torch_gpu(gpu=None):
    """A TorchLib on GPU `gpu` (an index, "last", or None: the current device), or the
    reason there is none."""
    try:
        import torch
    except ImportError:
        return None, "torch is not installed (the GPU tests allocate their arrays with torch)"
    if not torch.cuda.is_available():
        return None, "torch sees no GPU"
    if gpu is None:
        return TorchLib("cuda"), None
    count = torch.cuda.device_count()
    index = count - 1 if gpu == "last" else int(gpu)
    if not 0 <= index < count:
        return None, f"--gpu {gpu}: torch sees {count} GPU(s)"
    return TorchLib(f"cuda:{index}"), None


_GPU_BUILDS = {  # backend: (its name, CMake switch, build command, runtime, where it builds)
    "nvidia": ("NVIDIA", "CAMP_ENABLE_NVIDIA", "bash scripts/build_nvidia.sh build", "CUDA runtime",
               "a machine with nvcc"),
    "metax": ("MetaX", "CAMP_ENABLE_METAX", "bash scripts/build_metax.sh build", "MACA runtime",
              "a machine with the MACA toolkit, see docs/metax.md"),
}


def _gpu_skip_reason(backend, path, available):
    """Why --backend nvidia / metax cannot run: the loaded library was built without it, or
    with it but no device of that kind is visible."""
    from pathlib import Path

    name, switch, build, runtime, where = _GPU_BUILDS[backend]
    cache = Path(path).parent / "CMakeCache.txt"
    try:
        built = f"{switch}:BOOL=ON" in cache.read_text(errors="replace")
    except OSError:
        built = False
    if not built:
        return (f"no {name} build loaded: {path} has no {name} backend (build "
                f"build-{backend}/ with `{build}` on {where}; available here: "
                f"{', '.join(available)})")
    return (f"no {name} device visible: {path} has the {name} backend but the {runtime} "
            f"reports no usable device (no GPU here, or a driver older than the runtime the "
            f"library was built with; available: {', '.join(available)})")


def select(requested, gpu=None):
    """The Target for --backend `requested` ("auto": the GPU backend when one is built and
    a device is visible, else cpu); GPU arrays on device `gpu` (see _torch_gpu)."""
    import operator_runtime as ort
    from operator_runtime import _lib

    try:
        if requested == "metax":
            _lib.get(prefer="metax")  # build-metax/ first, as a first call with backend="metax" does
        available = ort.available_backends()
    except ort.OperatorRuntimeError as exc:
        return Target(requested, requested, NUMPY, str(exc))
    if requested == "auto":
        backend = next((b for b in GPU_BACKENDS if b in available), None)
        lib, reason = _torch_gpu(gpu) if backend else (None, None)
        if backend and gpu is not None and lib is None:
            return Target("auto", backend, NUMPY, reason)
        if lib is None:
            return Target("auto", "cpu", NUMPY)
        return Target("auto", backend, lib)
    if requested == "cpu":
        return Target("cpu", "cpu", NUMPY)
    if requested == "tilelang":
        from operator_runtime import _backends

        try:
            _backends.python_backend("tilelang")  # imports tilelang: the reason when it cannot
        except ort.OperatorRuntimeError as exc:
            return Target(requested, requested, NUMPY, str(exc))
        lib, reason = _torch_gpu()  # its kernels run on torch CUDA tensors
        return Target(requested, requested, lib or NUMPY, reason)
    if requested in _GPU_BUILDS and requested not in available:
        return Target(requested, requested, NUMPY,
                      _gpu_skip_reason(requested, ort.library_path(), available))
    if requested not in available:
        return Target(requested, requested, NUMPY,
                      f"backend '{requested}' is not available with {ort.library_path()} "
                      f"(available: {', '.join(available)})")
    lib, reason = _torch_gpu(gpu)
    return Target(requested, requested, lib or NUMPY, reason)


def variants_for(target, op, selection):
    """The kernel variants a run checks `op` on: selection "all" gives "auto" (the plan's
    choice) and every variant of the target backend's ladder, never "student" (an exercise
    runs only when asked for by name); a name gives just that variant. Empty when the
    target cannot run here (tests skip anyway)."""
    import operator_runtime as ort

    if selection != "all":
        return [selection]
    if target.skip_reason or target.resolved not in ("cpu",) + GPU_BACKENDS:
        return ["auto"]
    names = ort.variants(op, target.resolved)
    return ["auto"] + [n for n in names if n not in ("auto", "student")]


def variant_unavailable(target, op, variant):
    """Why `variant` cannot be asked of `op` on the target backend (None when it can)."""
    import operator_runtime as ort

    if variant == "auto" or target.skip_reason:
        return None
    names = ort.variants(op, target.resolved)
    if variant in names:
        return None
    hint = " (build one with `python3 scripts/camp.py exercise " + op + "`)" if variant == "student" else ""
    return f"{op} has no variant {variant!r} on {target.resolved} (has: {', '.join(names)}){hint}"


def is_not_supported(exc):
    """Whether `exc` is a variant's OPRT_ERR_NOT_SUPPORTED (it cannot run that layout)."""
    from operator_runtime.errors import ERR_NOT_SUPPORTED

    return getattr(exc, "status", None) == ERR_NOT_SUPPORTED
