"""Timing a computation the way the benchmarks do: medians of repeats of many back-to-back calls.

`fns` is a list of zero-argument functions, one per buffer set: call i runs fns[i % len(fns)],
so a working set larger than the caches is cycled and every call reads memory, not cache. A
repeat always covers whole passes over the sets.

GPU (torch's current stream), two figures per computation:
  loop   CUDA events around `iters` back-to-back calls from Python: includes each call's
         Python and launch cost (~5-10 us), so small kernels measure that overhead.
  graph  the same `iters` calls captured once in a CUDA graph, events around its replay:
         the kernels' own time plus ~0.5 us of launch each. The benchmark's main figure.
CPU: time.perf_counter around back-to-back calls (loop only), started after waiting up to
0.5 s for idle cores: a library that ran before may leave worker threads spinning
(OpenBLAS's wait ~0.1 s for the next call), and a thread pool that sees every core taken,
as ours does, runs on one.

Never time one launch alone with two events: that measures ~16 us of overhead.
"""

import math
import statistics
import time
from dataclasses import dataclass
from typing import Optional

MAX_GRAPH_CALLS = 4096  # calls captured in one graph (more only when there are more sets)


@dataclass
class Timing:
    loop_s: float  # median seconds per call, back-to-back calls
    graph_s: Optional[float]  # GPU: median seconds per call in a CUDA graph replay
    iters: int  # calls per repeat
    repeats: int
    samples: tuple = ()  # seconds per call of each repeat of the benchmark's figure

    @property
    def best_s(self):
        """The benchmark's figure: graph replay where there is one, else the loop."""
        return self.graph_s if self.graph_s is not None else self.loop_s

    @property
    def min_s(self):
        return min(self.samples) if self.samples else self.best_s

    @property
    def max_s(self):
        return max(self.samples) if self.samples else self.best_s


def _sequence(fns, iters):
    n = len(fns)
    return [fns[i % n] for i in range(iters)]


def _iters_for(fns, per_call_s, target_s, max_calls=None):
    """Calls per repeat: whole passes over the sets, about target_s long."""
    n = len(fns)
    passes = max(1, math.ceil(target_s / max(per_call_s * n, 1e-9)))
    if max_calls is not None:
        passes = max(1, min(passes, max_calls // n))
    return n * passes


def wait_for_idle_cpus(timeout_s=0.5):
    """Returns once no thread but this one is runnable on the machine (the count in the
    fourth field of /proc/loadavg, "1/345"), or after timeout_s, polling every 5 ms. Where
    there is no /proc/loadavg it returns at once."""
    deadline = time.perf_counter() + timeout_s
    while time.perf_counter() < deadline:
        try:
            with open("/proc/loadavg") as f:
                runnable = int(f.read().split()[3].split("/")[0])
        except (OSError, ValueError, IndexError):
            return
        if runnable <= 1:
            return
        time.sleep(0.005)


def time_cpu(fns, target_s=0.02, repeats=5, budget_s=3.0):
    """Timing (loop only) of the calls on the host: median over `repeats` (at least 3, fewer
    than asked when one repeat would overrun budget_s / repeats).

    The cores are let go idle first (wait_for_idle_cpus), then one untimed pass over the
    sets: page faults, cold caches and thread-pool start-up are not what we measure."""
    wait_for_idle_cpus()
    for fn in fns:
        fn()
    t0 = time.perf_counter()
    for fn in fns:
        fn()
    per_call = (time.perf_counter() - t0) / len(fns)
    iters = _iters_for(fns, per_call, target_s)
    repeats = max(3, min(repeats, int(budget_s / max(per_call * iters, 1e-9))))
    seq = _sequence(fns, iters)
    times = []
    for _ in range(repeats):
        t0 = time.perf_counter()
        for fn in seq:
            fn()
        times.append((time.perf_counter() - t0) / iters)
    return Timing(statistics.median(times), None, iters, repeats, tuple(times))


def time_gpu(fns, target_s=0.01, repeats=5, graph=True):
    """Timing of the calls on torch's current CUDA stream: events around back-to-back calls
    (loop) and around the replay of a CUDA graph of the same calls (graph; None when graph
    is False). Each fn must only enqueue work on the current stream (no synchronization,
    no host reads), as prepared ops and torch ops do."""
    import torch

    for fn in fns:  # warm-up: lazy initialization must not happen during capture
        fn()
    torch.cuda.synchronize()
    start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)

    def events(body):
        start.record()
        body()
        end.record()
        end.synchronize()
        return start.elapsed_time(end) / 1e3

    def run_all(seq):
        def body():
            for fn in seq:
                fn()
        return body

    per_call = events(run_all(fns)) / len(fns)
    iters = _iters_for(fns, per_call, target_s, max(MAX_GRAPH_CALLS, len(fns)))
    seq = _sequence(fns, iters)
    loops = [events(run_all(seq)) / iters for _ in range(repeats)]
    loop = statistics.median(loops)
    if not graph:
        return Timing(loop, None, iters, repeats, tuple(loops))

    g = torch.cuda.CUDAGraph()
    with torch.cuda.graph(g):  # makes a side stream current: every fn enqueues onto it
        for fn in seq:
            fn()
    try:
        g.replay()  # warm-up replay
        torch.cuda.synchronize()
        replays = [events(g.replay) / iters for _ in range(repeats)]
    finally:
        del g
    return Timing(loop, statistics.median(replays), iters, repeats, tuple(replays))
