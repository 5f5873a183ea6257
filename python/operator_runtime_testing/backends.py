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


def _torch_gpu():
    """A TorchLib on the current CUDA device, or the reason there is none."""
    try:
        import torch
    except ImportError:
        return None, "torch is not installed (the GPU tests allocate their arrays with torch)"
    if not torch.cuda.is_available():
        return None, "torch sees no GPU"
    return TorchLib("cuda"), None


def _metax_skip_reason(path, available):
    """Why --backend metax cannot run: no MetaX build loaded, or a MetaX build without a device."""
    from pathlib import Path

    cache = Path(path).parent / "CMakeCache.txt"
    try:
        built = "CAMP_ENABLE_METAX:BOOL=ON" in cache.read_text(errors="replace")
    except OSError:
        built = False
    if not built:
        return (f"no MetaX build loaded: {path} has no MetaX backend (build build-metax/ with "
                f"`bash scripts/build_metax.sh build` on a machine with the MACA toolkit, see "
                f"docs/metax.md; available here: {', '.join(available)})")
    return (f"no MetaX device visible: {path} has the MetaX backend but the MACA runtime "
            f"reports no device (available: {', '.join(available)})")


def select(requested):
    """The Target for --backend `requested` ("auto": the GPU backend when one is built and
    a device is visible, else cpu)."""
    import operator_runtime as ort
    from operator_runtime import _lib

    try:
        if requested == "metax":
            _lib.get(prefer="metax")  # build-metax/ first, as a first call with backend="metax" does
        available = ort.available_backends()
    except ort.OperatorRuntimeError as exc:
        return Target(requested, requested, NUMPY, str(exc))
    if requested == "auto":
        gpu = next((b for b in GPU_BACKENDS if b in available), None)
        lib = _torch_gpu()[0] if gpu else None
        if lib is None:
            return Target("auto", "cpu", NUMPY)
        return Target("auto", gpu, lib)
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
    if requested == "metax" and requested not in available:
        return Target(requested, requested, NUMPY, _metax_skip_reason(ort.library_path(), available))
    if requested not in available:
        return Target(requested, requested, NUMPY,
                      f"backend '{requested}' is not available with {ort.library_path()} "
                      f"(available: {', '.join(available)})")
    lib, reason = _torch_gpu()
    return Target(requested, requested, lib or NUMPY, reason)
