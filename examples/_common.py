"""What the numbered examples share: finding the package, --backend, and moving arrays
to where that backend runs (numpy on the CPU; torch tensors on a GPU backend)."""

import argparse
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "python"))  # run from a checkout

import ml_dtypes  # noqa: E402
import numpy as np  # noqa: E402

import operator_runtime as ort  # noqa: E402

__all__ = ["ort", "parse_backend", "to_backend", "to_f64", "finish"]


def parse_backend(description):
    parser = argparse.ArgumentParser(description=description)
    parser.add_argument("--backend", default="auto",
                        choices=("auto", "cpu", "nvidia", "metax", "tilelang"))
    return parser.parse_args().backend


def to_backend(array, backend):
    """numpy stays numpy for "auto" and "cpu"; the GPU backends get a torch tensor on the GPU."""
    if backend in ("auto", "cpu"):
        return array
    try:
        import torch
    except ImportError:
        sys.exit(f"--backend {backend}: the examples hand the GPU backends torch CUDA tensors; "
                 f"install torch (pip install torch) or run with --backend cpu")

    if array.dtype == ml_dtypes.bfloat16:  # torch has its own bf16: go through f32, exact
        return torch.from_numpy(array.astype(np.float32)).cuda().to(torch.bfloat16)
    return torch.from_numpy(np.array(array)).cuda()


def to_f64(array):
    """Any result as a float64 numpy array (every f16/bf16/f32 value is exact in f64)."""
    if not isinstance(array, np.ndarray):
        array = array.float().cpu().numpy()
    return array.astype(np.float64)


def finish(name, backend, what, max_err, tol):
    """Prints the example's one line; exits non-zero when the error is above tolerance."""
    ok = bool(max_err <= tol)
    print(f"{name}: backend {backend}: {what}: {'OK' if ok else 'MISMATCH'} "
          f"(max error {max_err:.3g}, tolerance {tol:.1g})")
    sys.exit(0 if ok else 1)
