"""Timing a zero-argument function: median wall time on the CPU, CUDA events on GPUs."""

import statistics
import time


def time_cpu(fn, budget_s=1.0, min_repeats=3, max_repeats=100):
    """Median seconds of fn() over repeats that fill about budget_s (at least min_repeats).

    One untimed call first: page faults, cold caches and thread-pool start-up are
    not what we measure.
    """
    fn()
    times = []
    start = time.perf_counter()
    while len(times) < max_repeats and (
            len(times) < min_repeats or time.perf_counter() - start < budget_s):
        t0 = time.perf_counter()
        fn()
        times.append(time.perf_counter() - t0)
    return statistics.median(times)


def time_gpu(fn, budget_s=0.2, graph=True):
    """Seconds per fn() on the current CUDA stream: (events, graph).

    events: CUDA events around many back-to-back calls (includes the Python and
    launch overhead of each call). graph: the same calls captured once in a CUDA
    graph and replayed, which leaves mostly the kernels' own time (None when
    graph is False). fn must only enqueue work on torch's current stream.
    """
    import torch

    fn()  # warm-up; also any lazy initialization, which must not be captured
    torch.cuda.synchronize()
    start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
    start.record()
    fn()
    end.record()
    end.synchronize()
    one = max(start.elapsed_time(end) / 1e3, 1e-6)
    iters = int(min(1000, max(10, budget_s / one)))

    start.record()
    for _ in range(iters):
        fn()
    end.record()
    end.synchronize()
    events = start.elapsed_time(end) / 1e3 / iters
    if not graph:
        return events, None

    g = torch.cuda.CUDAGraph()
    with torch.cuda.graph(g):  # makes a side stream current: fn() enqueues onto it
        for _ in range(iters):
            fn()
    g.replay()  # warm-up replay
    torch.cuda.synchronize()
    start.record()
    g.replay()
    end.record()
    end.synchronize()
    return events, start.elapsed_time(end) / 1e3 / iters
