"""Benchmark cases: our prepared op against the peer library (numpy on the CPU, torch on GPUs),
timed the same way, in the same process, on the same input buffers; and the copy ceiling.

Bytes moved = each input read once + the output written once; GB/s = bytes / time (1e9).
A case smaller than `rotate_bytes` gets several buffer sets (a prepared op and a peer call per
set), cycled so that the working set exceeds the caches (GPU: 4x L2). Outputs start as NaN;
after timing, the outputs the timed calls wrote (first and last set) are checked against a
float64 reference: a benchmark of a wrong result is worthless.
"""

import gc
import math
import os
from dataclasses import dataclass
from typing import Optional

import numpy as np

from operator_runtime_testing import assertions
from operator_runtime_testing.arrays import NUMPY_DTYPES
from .timing import Timing, time_cpu, time_gpu

MAX_SETS = 4096  # buffer sets of one case, at most
GPU_CEILING_BYTES = 1 << 30  # the copy ceiling's source size (plus as much written)
CPU_CEILING_BYTES = 256 << 20


@dataclass
class BenchResult:
    op: str
    case: str
    dtype: str
    shapes: tuple  # input shapes
    params: dict
    series: str  # the line of the roofline plot this case belongs to
    nbytes: int  # each input read once, the output written once
    sets: int  # buffer sets cycled
    kernel: Optional[str]  # what our plan picked
    ours: Timing
    peer: Optional[Timing]  # None when not timed (run_bench(time_peer=False))
    ok: bool
    max_err: float
    message: str  # why the check failed ("" when ok)

    @property
    def ours_s(self):
        return self.ours.best_s

    @property
    def peer_s(self):
        return self.peer.best_s

    @property
    def speedup(self):
        return self.peer_s / self.ours_s


@dataclass
class Ceiling:
    """The device-to-device copy ceiling of this run: bytes = source read + destination written."""

    nbytes: int  # moved per copy (read + write)
    ours: Timing  # our prepared copy
    peer: Timing  # np.copyto / Tensor.copy_
    peer_name: str

    @property
    def ours_gbps(self):
        return self.nbytes / self.ours.best_s / 1e9

    @property
    def peer_gbps(self):
        return self.nbytes / self.peer.best_s / 1e9

    @property
    def gbps(self):
        return max(self.ours_gbps, self.peer_gbps)

    @property
    def source(self):
        """Which copy set the ceiling."""
        return "ours (prepare_copy)" if self.ours_gbps >= self.peer_gbps else self.peer_name


class Workbench:
    """How one run allocates, times and checks, for its array library and backend."""

    def __init__(self, target, seed, repeats=5, rotate_bytes=None):
        self.target = target
        self.lib = target.lib
        self.on_gpu = target.on_gpu
        self.repeats = repeats
        self.rotate_bytes = default_rotate_bytes(target) if rotate_bytes is None else rotate_bytes
        self._generator = None
        if self.lib.name == "torch":
            import torch

            self.torch = torch
            self._generator = torch.Generator(device=self.lib.device)
            self._generator.manual_seed(seed)
        self._rng = np.random.default_rng(seed)

    def reseed(self, seed):
        self._rng = np.random.default_rng(seed)
        if self._generator is not None:
            self._generator.manual_seed(seed)

    def randn(self, shape, dtype):
        """Standard-normal values (never zeros) of `dtype`; generated on the device for torch
        (a host generator would take seconds for 2^28 elements)."""
        if self._generator is None:
            return self.lib.randn(self._rng, shape, dtype)
        t = self.torch.randn(tuple(shape), generator=self._generator, device=self.lib.device,
                             dtype=self.torch.float32)
        return t.to(self.lib.dtypes[dtype])

    def time(self, fns):
        if self.on_gpu:
            return time_gpu(fns, repeats=self.repeats)
        return time_cpu(fns, repeats=self.repeats)

    def release(self):
        """Frees what a finished case left in the allocator's cache."""
        gc.collect()
        if self.lib.name == "torch":
            self.torch.cuda.empty_cache()


def default_rotate_bytes(target):
    """4x the last-level cache: the GPU's L2, the host's L3 (32 MiB when unknown)."""
    if target.lib.name == "torch":
        import torch

        props = torch.cuda.get_device_properties(target.lib.device)
        return 4 * int(getattr(props, "L2_cache_size", 0) or 64 << 20)
    return 4 * _host_llc_bytes()


def _host_llc_bytes():
    try:
        base = "/sys/devices/system/cpu/cpu0/cache"
        sizes = []
        for entry in os.listdir(base):
            with open(f"{base}/{entry}/size") as f:
                text = f.read().strip()
            scale = {"K": 1 << 10, "M": 1 << 20, "G": 1 << 30}.get(text[-1:], 1)
            sizes.append(int(text.rstrip("KMG")) * scale)
        return max(sizes)
    except (OSError, ValueError):
        return 32 << 20


def moved_bytes(shapes, out_shape, dtype):
    itemsize = NUMPY_DTYPES[dtype].itemsize
    return itemsize * (sum(math.prod(s) for s in shapes) + math.prod(out_shape))


def set_count(nbytes, rotate_bytes):
    if nbytes <= 0 or nbytes >= rotate_bytes:
        return 1
    return min(MAX_SETS, math.ceil(rotate_bytes / nbytes))


def run_bench(op, bench, case, dtype, wb, seed, variant=None, time_peer=True):
    """Times bench.prepare(out, *inputs, **params).run() (one prepared op per buffer set)
    against the peer function bench.PEERS[lib](peer_out, *inputs, **params) on the same
    inputs, then checks what the timed calls wrote. `variant`: the kernel variant of our
    op (None: the plan's choice); time_peer=False skips the peer (result.peer is None)."""
    lib = wb.lib
    wb.reseed(seed)
    shapes = [tuple(s) for s in case.inputs]
    out_shape = tuple(op.out_shape(shapes, case.params))
    nbytes = moved_bytes(shapes, out_shape, dtype)
    nsets = set_count(nbytes, wb.rotate_bytes)
    sets, prepared = [], []
    try:
        for _ in range(nsets):
            inputs = [wb.randn(s, dtype) for s in shapes]
            out, peer_out = lib.full_nan(out_shape, dtype), lib.empty(out_shape, dtype)
            extra = {} if variant is None else {"variant": variant}
            prepared.append(bench.prepare(out, *inputs, backend=wb.target.backend, **case.params,
                                          **extra))
            peer = bench.PEERS[lib.name](peer_out, *inputs, **case.params)
            sets.append((inputs, out, peer))
        kernel = prepared[0].kernel_name
        ours = wb.time([p.run for p in prepared])
        theirs = wb.time([peer for _, _, peer in sets]) if time_peer else None
        lib.synchronize()
        ok, max_err, message = True, 0.0, ""
        for i in sorted({0, nsets - 1}):
            inputs, out, _ = sets[i]
            set_ok, err, msg = check(op, bench, lib, dtype, out, inputs, case.params)
            max_err = max(max_err, err)
            if not set_ok and ok:
                ok, message = False, f"buffer set {i}: {msg}"
    finally:
        for p in prepared:
            p.destroy()
        del sets, prepared
        wb.release()
    return BenchResult(op.name, case.name, dtype, tuple(shapes), dict(case.params),
                       case.series or op.name, nbytes, nsets, kernel, ours, theirs, ok, max_err,
                       message)


def check(op, bench, lib, dtype, out, inputs, params):
    """(ok, max_abs_err, message): `out` against the float64 reference of `inputs`.

    numpy: the tests' own reference and tolerance (op.reference, op.tolerance). torch: on the
    device, the peer computation in float64 as reference, with bench.tolerance64 (or
    op.tolerance) on the float64 inputs."""
    if lib.name == "numpy":
        inputs64 = [lib.to_f64(x) for x in inputs]
        ref = assertions.round_to(op.reference(*inputs64, **params), dtype)
        tol = op.tolerance(dtype, inputs64, params)
        return assertions.compare(lib.to_f64(out), ref, *tol)

    import torch

    inputs64 = [x.to(torch.float64) for x in inputs]
    ref = bench.PEERS["torch"](torch.empty(out.shape, dtype=torch.float64, device=out.device),
                               *inputs64, **params)()
    ref = ref.to(out.dtype).to(torch.float64)  # as the output dtype holds it
    tolerance = getattr(bench, "tolerance64", None) or op.tolerance
    rtol, atol = tolerance(dtype, inputs64, params)
    return _compare_torch(torch, out.to(torch.float64), ref, rtol, atol)


def _compare_torch(torch, got, ref, rtol, atol):
    """assertions.compare for finite references, on the device: NaN or inf in `got` fails."""
    if got.shape != ref.shape:
        return False, math.inf, f"shape {tuple(got.shape)} != reference shape {tuple(ref.shape)}"
    if got.numel() == 0:
        return True, 0.0, ""
    err = (got - ref).abs()
    bound = ref.abs() * rtol + atol
    bad = ~(err <= bound)  # NaN fails too
    max_err = float(torch.nan_to_num(err, nan=math.inf).max())
    n_bad = int(bad.sum())
    if n_bad == 0:
        return True, max_err, ""
    i = int(bad.reshape(-1).nonzero()[0])
    index = tuple(int(k) for k in np.unravel_index(i, tuple(got.shape))) if got.dim() else ()
    bound_i = float(bound[index])
    return False, max_err, (f"{n_bad} of {got.numel()} elements differ; first at {index}: got "
                            f"{float(got[index])!r}, expected {float(ref[index])!r} (|diff| "
                            f"{float(err[index]):.3g} > tolerance {bound_i:.3g})")


def measure_ceiling(wb, copy_bench, seed, nbytes=None):
    """The copy ceiling: our prepared copy and the peer's (Tensor.copy_ / np.copyto) of one
    large float32 array (GPU 1 GiB, CPU 256 MiB), timed like the cases. Bytes count the read
    and the write."""
    lib = wb.lib
    nbytes = nbytes or (GPU_CEILING_BYTES if wb.on_gpu else CPU_CEILING_BYTES)
    wb.reseed(seed)
    shape = (nbytes // 4,)
    src = wb.randn(shape, "f32")
    dst, peer_dst = lib.empty(shape, "f32"), lib.empty(shape, "f32")
    prepared = copy_bench.prepare(dst, src, backend=wb.target.backend)
    try:
        ours = wb.time([prepared.run])
        peer = wb.time([copy_bench.PEERS[lib.name](peer_dst, src)])
    finally:
        prepared.destroy()
        del src, dst, peer_dst
        wb.release()
    peer_name = "torch copy_" if lib.name == "torch" else "np.copyto"
    return Ceiling(2 * nbytes, ours, peer, peer_name)
