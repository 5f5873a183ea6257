"""Benchmark cases: our prepared op against the peers (numpy on the CPU; on GPUs torch eager and,
where importable and able to run the case, torch.compile, Triton and QuACK: tests/bench/<op>.py),
timed the same way, in the same process, on the same input buffers; and the copy ceiling.

Every case runs in two conditions:
  hot   one buffer set, the same call replayed: the input is in the cache (GPU: L2) when it
        fits, like a tensor the previous layer just wrote;
  dram  buffer sets cycled until the working set reaches `rotate_bytes` (default 4x the GPU's
        L2 / the host's last-level cache), so every call reads memory (at most MAX_SETS sets:
        a case below rotate_bytes / MAX_SETS, launch-bound anyway, cycles less).
A case at least `rotate_bytes` large has one set in both, and one measurement serves both.

Bytes moved = each input read once + the output written once; GB/s = bytes / time (1e9).
Outputs start as NaN; after timing, the outputs ours wrote (first and last set) and each peer
wrote (first set) are checked against a float64 reference: a benchmark of a wrong result is
worthless.
"""

import gc
import math
import os
import time
from dataclasses import dataclass
from typing import Optional

import numpy as np

from operator_runtime_testing import assertions
from operator_runtime_testing.arrays import NUMPY, NUMPY_DTYPES
from .timing import Timing, time_cpu, time_gpu

MAX_SETS = 4096  # buffer sets of one case, at most
GPU_CEILING_BYTES = 1 << 30  # the copy ceiling's source size (plus as much written)
CPU_CEILING_BYTES = 256 << 20


CONDITIONS = ("hot", "dram")


@dataclass
class PeerResult:
    times: dict  # condition -> Timing; empty when the peer did not run
    why: str = ""  # why it did not run ("" when it did)
    ok: bool = True  # its output against the reference
    message: str = ""


@dataclass
class BenchResult:
    op: str
    case: str
    dtype: str
    shapes: tuple  # input shapes
    params: dict
    series: str  # the case's series (tests/cases/<op>.py), default the operator
    family: str  # the line of the bandwidth plot (see family())
    nbytes: int  # each input read once, the output written once
    sets: int  # buffer sets cycled in the dram condition
    kernel: Optional[str]  # what our plan picked
    ours: dict  # condition -> Timing
    peers: dict  # peer name -> PeerResult, the main peer (torch / numpy) first
    ok: bool
    max_err: float
    message: str  # why the check failed ("" when ok)
    flops: Optional[int] = None  # floating-point operations of one call (matmul: 2 M N K), else None

    @property
    def main_peer(self):
        return next(iter(self.peers), None)

    def peer_timing(self, name=None, condition="dram"):
        """The Timing of a peer (default the main one) or None when it did not run."""
        p = self.peers.get(name or self.main_peer)
        return p.times.get(condition) if p else None

    @property
    def ours_s(self):
        """The headline figure: ours in the dram condition."""
        return self.ours["dram"].best_s

    @property
    def peer(self):
        return self.peer_timing()

    @property
    def peer_s(self):
        t = self.peer
        return t.best_s if t else None

    def tflops(self, condition="dram"):
        """Ours in TFLOP/s (None for an operator counted in bytes only)."""
        return self.flops / self.ours[condition].best_s / 1e12 if self.flops else None

    @property
    def speedup(self):
        return self.peer_s / self.ours_s if self.peer_s else None


def family(op, case):
    """The line of the bandwidth plot a case is on: the cases of one series whose shapes differ
    only in the number of rows (an operator over an axis: same row length), or only in size
    (elementwise, or a reduction of every element). Unrelated shapes are never joined."""
    series = case.series or op.name
    shape = tuple(case.inputs[0]) if case.inputs else ()
    dim = case.params.get("dim", -1)
    if "dim" not in op.inplace_params or dim is None or len(shape) < 2:
        return series
    return f"{series}, rows of {shape[-1]}"


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


def peers_of(bench, lib, names=None):
    """{name: factory}: the main peer (numpy / torch eager) first, then the module's GPU_PEERS
    (on GPUs), narrowed to `names` when given."""
    found = {lib.name: bench.PEERS[lib.name]}
    if lib.name == "torch":
        found.update(getattr(bench, "GPU_PEERS", {}))
    return {k: v for k, v in found.items() if names is None or k in names}


def run_bench(op, bench, case, dtype, wb, seed, variant=None, peer_names=None):
    """Times bench.prepare(out, *inputs, **params).run() (one prepared op per buffer set) and
    each peer factory(peer_out, *inputs, **params) (peers_of) on the same inputs, in both
    conditions, then checks what the timed calls wrote. `variant`: the kernel variant of ours
    (None: the plan's choice); `peer_names`: the peers to run (None: all, (): none)."""
    lib = wb.lib
    wb.reseed(seed)
    shapes = [tuple(s) for s in case.inputs]
    out_shape = tuple(op.out_shape(shapes, case.params))
    nbytes = moved_bytes(shapes, out_shape, dtype)
    nsets = set_count(nbytes, wb.rotate_bytes)
    sets, prepared, peer_outs = [], [], []
    peers = {}
    try:
        for _ in range(nsets):
            inputs = [wb.randn(s, dtype) for s in shapes]
            out = lib.full_nan(out_shape, dtype)
            extra = {} if variant is None else {"variant": variant}
            prepared.append(bench.prepare(out, *inputs, backend=wb.target.backend, **case.params,
                                          **extra))
            sets.append((inputs, out))
            peer_outs.append(lib.empty(out_shape, dtype))
        kernel = prepared[0].kernel_name
        ours = _time_conditions(wb, [p.run for p in prepared])
        checks = [Checker(op, bench, lib, dtype, sets[i][0], case.params)
                  for i in sorted({0, nsets - 1})]
        ok, max_err, message = True, 0.0, ""
        for checker, i in zip(checks, sorted({0, nsets - 1})):
            set_ok, err, msg = checker(sets[i][1])
            max_err = max(max_err, err)
            if not set_ok and ok:
                ok, message = False, f"buffer set {i}: {msg}"
        factories = peers_of(bench, lib, peer_names)
        if any(name != lib.name for name in factories):
            from . import peers as peer_lib

            peer_lib.start_case()
        for name, factory in factories.items():
            peers[name] = _run_peer(wb, factory, sets, peer_outs, case.params, checks[0], dtype)
    finally:
        for p in prepared:
            p.destroy()
        del sets, prepared, peer_outs
        wb.release()
    return BenchResult(op.name, case.name, dtype, tuple(shapes), dict(case.params),
                       case.series or op.name, family(op, case), nbytes, nsets, kernel, ours,
                       peers, ok, max_err, message, flops_of(op.name, shapes))


def flops_of(op_name, shapes):
    """Floating-point operations of one call of a compute-bound operator (matmul kind:
    a multiply and an add per (i, j, p)); None for the others, which are counted in bytes."""
    from operator_runtime import _manifest

    if _manifest.op(op_name).kind != "matmul":
        return None
    (m, k), (_, n) = shapes[0], shapes[1]
    return 2 * m * n * k


def _time_conditions(wb, fns):
    """{"hot": Timing of fns[0] replayed, "dram": Timing of all fns cycled} (one measurement
    for both when there is one set)."""
    dram = wb.time(fns)
    return {"hot": wb.time(fns[:1]) if len(fns) > 1 else dram, "dram": dram}


def _run_peer(wb, factory, sets, peer_outs, params, checker, dtype):
    from .peers import NotAvailable

    lib = wb.lib
    try:
        fns = [factory(peer_outs[i], *inputs, **params) for i, (inputs, _) in enumerate(sets)]
        _fill_nan(lib, peer_outs[0])
        times = _time_conditions(wb, fns)
        lib.synchronize()
    except NotAvailable as exc:
        return PeerResult({}, str(exc))
    except Exception as exc:  # noqa: BLE001 (a peer that fails is n/a, with the error)
        wb.release()
        return PeerResult({}, f"failed: {type(exc).__name__}: {str(exc).splitlines()[0][:160]}"
                              if str(exc) else f"failed: {type(exc).__name__}")
    ok, _, message = checker(peer_outs[0])
    return PeerResult(times, "", ok, message)


def _fill_nan(lib, a):
    if lib.name == "torch":
        a.fill_(math.nan)
    else:
        a[...] = np.nan


class Checker:
    """checker(out) -> (ok, max_abs_err, message): `out` against the float64 reference of
    `inputs`, the reference computed once.

    numpy: the tests' own reference and tolerance (op.reference, op.tolerance). torch: on the
    device, the main peer's computation in float64 as reference, with bench.tolerance64 (or
    op.tolerance) on the float64 inputs."""

    def __init__(self, op, bench, lib, dtype, inputs, params):
        self.lib = lib
        if lib.name == "numpy":
            inputs64 = [lib.to_f64(x) for x in inputs]
            self.ref = assertions.round_to(op.reference(*inputs64, **params), dtype)
            self.tol = op.tolerance(dtype, inputs64, params)
            return
        import torch

        self.torch = torch
        inputs64 = [x.to(torch.float64) for x in inputs]
        out_shape = tuple(op.out_shape([tuple(x.shape) for x in inputs], params))
        ref = bench.PEERS["torch"](torch.empty(out_shape, dtype=torch.float64,
                                               device=inputs[0].device), *inputs64, **params)()
        self.ref = ref.to(lib.dtypes[dtype]).to(torch.float64)  # as the output dtype holds it
        tolerance = getattr(bench, "tolerance64", None) or op.tolerance
        self.tol = tolerance(dtype, inputs64, params)

    def __call__(self, out):
        if self.lib.name == "numpy":
            return assertions.compare(self.lib.to_f64(out), self.ref, *self.tol)
        return _compare_torch(self.torch, out.to(self.torch.float64), self.ref, *self.tol)


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


OVERHEAD_ELEMENTS = 8


def _host_seconds(fns, lib, target_s=0.002, repeats=40):
    """{name: host seconds per call} of back-to-back calls of each fn in `fns` ({name:
    fn}), synchronized after each repeat (on a GPU: the enqueue rate of tiny kernels, which
    the GPU outruns): the best repeat, as timeit reports (what a call costs; on a machine
    shared with other jobs, a median also counts the time slices they took). The
    functions take turns, repeat by repeat, so that a busy machine slows them alike."""
    iters = {}
    for name, fn in fns.items():
        fn()
        lib.synchronize()
        t0 = time.perf_counter()
        for _ in range(100):
            fn()
        lib.synchronize()
        iters[name] = max(100, int(target_s / max((time.perf_counter() - t0) / 100, 1e-9)))
    times = {name: [] for name in fns}
    for _ in range(repeats):
        for name, fn in fns.items():
            n = iters[name]
            t0 = time.perf_counter()
            for _ in range(n):
                fn()
            lib.synchronize()
            times[name].append((time.perf_counter() - t0) / n)
    return {name: min(t) for name, t in times.items()}


def measure_overhead(wb):
    """[(what, seconds per call or None, note)]: what a call of a tiny op (relu on 8 float32
    elements) costs on the host, on the run's arrays (numpy on the CPU, torch tensors on a
    GPU) and, on a GPU run, on numpy arrays with the cpu backend too: one-shot ort.relu
    (from the plan cache once its layout was seen), a prepared op's run(), the C library's
    operand check of every execute called alone, a bare ctypes call (the floor of any call
    into the library), and the peers' eager calls; then one summary row per array library:
    one-shot / prepared and one-shot / torch eager (the targets: at most 1.5 and 1)."""
    rows = _overhead_rows(wb.lib, wb.target.backend, lambda: wb.randn((OVERHEAD_ELEMENTS,), "f32"))
    if wb.lib.name != "numpy":
        rng = np.random.default_rng(0)
        rows += _overhead_rows(NUMPY, "cpu", lambda: NUMPY.randn(rng, (OVERHEAD_ELEMENTS,)))
    return rows


def _overhead_rows(lib, backend, make_input):
    import ctypes

    import operator_runtime as ort
    from operator_runtime import _lib

    x = make_input()
    out = lib.empty((OVERHEAD_ELEMENTS,), "f32")
    where = f"{lib.name}/{getattr(lib, 'device', 'cpu')}"  # e.g. numpy/cpu, torch/cuda
    # Which hit path one-shot calls take: the compiled module, or ctypes (and why).
    info = ort.fast_call_info()
    hit = ("a plan cache hit in C (_fastcall): a new output and the execute call" if info["compiled"]
           else "a plan cache hit through ctypes (no _fastcall: ort.fast_call_info() says why)")
    version = _lib.get().dll.oprt_version
    version.restype = ctypes.c_char_p
    # (key, row label, the function timed or the reason it cannot run, note)
    cases = [("one-shot", "ort.relu(x) one-shot", lambda: ort.relu(x, backend=backend), hit),
             ("one-shot out", "ort.relu_(out, x) one-shot",
              lambda: ort.relu_(out, x, backend=backend), "")]
    prepared = ort.prepare_relu(out, x, backend=backend)
    c, desc = prepared._c, prepared._desc
    ptrs = [o.ptr or None for o in prepared._operands]
    cases += [("prepared", "prepared.run()", prepared.run, ""),
              ("check", "C operand check alone (check_execute)",
               lambda: c.check_execute(desc, *ptrs),
               "the checks every execute makes, called through ctypes: its cost is mostly "
               "ctypes'"),
              ("floor", "a bare ctypes call (oprt_version)", version,
               "the floor of a call into the library through ctypes")]
    if lib.name == "numpy":
        cases.append(("numpy", "numpy np.maximum(x, 0, out=out)",
                      lambda: np.maximum(x, 0, out=out), ""))
    try:
        import torch
    except ImportError:
        cases.append(("torch", "torch eager torch.relu(x)", "torch is not importable", ""))
    else:
        tx = x if lib.name == "torch" else torch.from_numpy(x)
        cases.append(("torch", "torch eager torch.relu(x)", lambda: torch.relu(tx),
                      "" if lib.name == "torch" else "on torch.from_numpy(x)"))
    fns, why = {}, {}
    for key, _, fn, _ in cases:
        if isinstance(fn, str):
            why[key] = fn
            continue
        try:
            fn()
            fns[key] = fn
        except Exception as exc:  # noqa: BLE001 (a row that cannot run says why)
            why[key] = f"{type(exc).__name__}: {exc}"
    try:
        seconds = _host_seconds(fns, lib)
    finally:
        prepared.destroy()
    rows = [(f"{where} {label}", seconds.get(key),
             f"n/a: {why[key]}" if key in why else note) for key, label, _, note in cases]
    ratios = []
    if "one-shot" in seconds and "prepared" in seconds:
        ratios.append(f"one-shot / prepared: relu(x) "
                      f"{seconds['one-shot'] / seconds['prepared']:.2f}x, relu_(out, x) "
                      f"{seconds['one-shot out'] / seconds['prepared']:.2f}x (target <= 1.5x)")
    if "one-shot" in seconds and "torch" in seconds:
        ratios.append(f"one-shot relu(x) / torch eager: "
                      f"{seconds['one-shot'] / seconds['torch']:.2f}x (target <= 1x)")
    if ratios:
        rows.append((f"{where} ratios", None, "; ".join(ratios)))
    return rows
