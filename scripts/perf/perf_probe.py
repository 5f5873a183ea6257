#!/usr/bin/env python3
"""A small standalone benchmark of the operator runtime against PyTorch on one GPU.

    python3 scripts/perf/perf_probe.py --op softmax --shape 8192x4096 --dtype bf16
    python3 scripts/perf/perf_probe.py --op reduce_sum --shape 16384x16384 --dim 0
    python3 scripts/perf/perf_probe.py --op vector_add --shape 65536x1024 --bcast row
    python3 scripts/perf/perf_probe.py --set targets          # the performance issue's target cases

Method (the harness's, docs/performance.md): each case is prepared once per buffer set
(operator_runtime.prepare_*), many launches are captured in one CUDA graph and the
graph is replayed several times; the median replay time over the launch count is
the time per launch. Buffer sets rotate so that the data touched in one replay is
larger than the 60 MB L2, so bandwidth figures are HBM figures. PyTorch runs the same
way on the same buffers. The copy ceiling (torch copy_ of 1 GiB of float32, bytes
read + written; see copy_ceiling) is measured in the same run; GB/s counts every input
read once and every output written once.

Needs torch with CUDA and the library built with the nvidia backend (CAMP_BUILD_DIR
or build-nvidia/), PYTHONPATH=python.
"""

import argparse
import json
import math
import statistics
import sys
import time

import torch

import operator_runtime as ort

L2_BYTES = 60 * 2**20
ROTATE_BYTES = 3 * L2_BYTES  # data touched per replay, at least
DTYPES = {"f32": torch.float32, "f16": torch.float16, "bf16": torch.bfloat16}
TOL = {"f32": 1e-5, "f16": 2e-3, "bf16": 1.6e-2}  # relative error allowed against torch

# The performance issue's benchmark set (section 1), by operator.
ELEMENTWISE_SIZES = [2**k for k in range(12, 29, 2)] + [(4097, 4099)]
REDUCE_CASES = [((2**28,), "all"), ((65536, 128), -1), ((128, 65536), -1), ((65536, 128), 0),
                ((128, 65536), 0), ((16384, 16384), -1), ((16384, 16384), 0), ((8, 2**25), 0),
                ((8, 2**25), -1), ((144, 1280), -1), ((65536, 1024), 0)]
SOFTMAX_SHAPES = [(1, 128), (16, 128), (144, 1280), (1008, 1280), (1008, 2304), (2032, 2304),
                  (784, 3840), (4080, 1536), (32768, 32), (32768, 128), (16384, 1024), (8192, 4096),
                  (4096, 16384), (2048, 65536), (1024, 131072), (256, 1048576)]

# The cases of the issue's section 2 targets (a quick read of every target).
TARGETS = (
    [("copy", (2**26,), d, {}) for d in ("f32", "bf16")]
    + [("relu", (2**26,), d, {}) for d in ("f32", "f16", "bf16")]
    + [("vector_add", (2**26,), d, {}) for d in ("f32", "bf16")]
    + [("vector_add", (65536, 1024), d, {"bcast": "row"}) for d in ("f32", "bf16")]
    + [("vector_add", (2**26,), "f32", {"bcast": "scalar"})]
    + [("reduce_sum", s, "f32", {"dim": d}) for s, d in
       [((65536, 128), -1), ((128, 65536), -1), ((16384, 16384), 0), ((8, 2**25), 0),
        ((65536, 1024), 0), ((2**28,), "all")]]
    + [("softmax", s, d, {}) for s in [(1, 128), (16, 128), (144, 1280)] for d in ("f32",)]
    + [("softmax", s, d, {}) for s in [(4080, 1536), (16384, 1024), (8192, 4096), (4096, 16384)]
       for d in ("f32", "bf16")]
    + [("softmax", s, d, {}) for s in [(2048, 65536), (1024, 131072), (256, 1048576)]
       for d in ("f32", "bf16")]
)


def issue_set(dtypes):
    cases = []
    for d in dtypes:
        for s in ELEMENTWISE_SIZES:
            shape = s if isinstance(s, tuple) else (s,)
            cases += [("copy", shape, d, {}), ("relu", shape, d, {}), ("vector_add", shape, d, {})]
        cases += [("vector_add", (65536, 1024), d, {"bcast": "row"}),
                  ("vector_add", (2**26,), d, {"bcast": "scalar"})]
        cases += [("reduce_sum", s, d, {"dim": dim}) for s, dim in REDUCE_CASES]
        cases += [("softmax", s, d, {}) for s in SOFTMAX_SHAPES]
    return cases


def parse_shape(text):
    dims = []
    for part in text.lower().split("x"):
        dims.append(2 ** int(part[2:]) if part.startswith("2^") else int(part))
    return tuple(dims)


def graph_time(calls, launches, replays):
    """Median seconds per launch: `launches` calls (cycling through `calls`) captured
    in one CUDA graph, the graph replayed `replays` times."""
    for c in calls:  # eager warm-up: module loading, workspace, allocator
        c()
    torch.cuda.synchronize()
    graph = torch.cuda.CUDAGraph()
    with torch.cuda.graph(graph):
        for i in range(launches):
            calls[i % len(calls)]()
    graph.replay()
    torch.cuda.synchronize()
    start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
    times = []
    for _ in range(replays):
        start.record()
        graph.replay()
        end.record()
        end.synchronize()
        times.append(start.elapsed_time(end) / 1e3 / launches)
    del graph
    return statistics.median(times)


def events_time(call, launches, replays):
    """Median seconds per call over back-to-back eager calls timed with events."""
    call()
    torch.cuda.synchronize()
    start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
    times = []
    for _ in range(replays):
        start.record()
        for _ in range(launches):
            call()
        end.record()
        end.synchronize()
        times.append(start.elapsed_time(end) / 1e3 / launches)
    return statistics.median(times)


def copy_ceiling(replays):
    """Bytes/s of torch copy_ of 1 GiB of float32 (read + write). Inside a CUDA graph
    copy_ becomes a memcpy node, which at 1 GiB ran on the copy engine at ~2.7 TB/s on
    the H200 (2026-11-29) against ~4.2 TB/s eagerly: the faster of the two is the ceiling."""
    n = 2**28
    src = torch.randn(n, device="cuda")
    dst = torch.empty_like(src)
    t = min(graph_time([lambda: dst.copy_(src)], 10, replays), events_time(lambda: dst.copy_(src), 10, replays))
    del src, dst
    torch.cuda.empty_cache()
    return 2 * n * 4 / t


def make_case(op, shape, dtype, params):
    """(make_set, ours(set) -> PreparedOp, torch(set) -> callable, bytes moved, out(set), label)."""
    tdt = DTYPES[dtype]
    esize = torch.tensor([], dtype=tdt).element_size()
    numel = math.prod(shape)

    def rand(s):
        return torch.randn(s, device="cuda", dtype=torch.float32).mul_(2).to(tdt)

    if op in ("copy", "relu"):
        def make():
            return {"x": rand(shape), "out": torch.empty(shape, device="cuda", dtype=tdt)}
        if op == "copy":
            ours = lambda s: ort.prepare_copy(s["out"], s["x"])
            peer = lambda s: (lambda: s["out"].copy_(s["x"]))
        else:
            ours = lambda s: ort.prepare_relu(s["out"], s["x"])
            peer = lambda s: (lambda: torch.clamp_min(s["x"], 0, out=s["out"]))
        return make, ours, peer, 2 * numel * esize, "x"
    if op == "vector_add":
        bcast = params.get("bcast", "none")
        b_shape = {"none": shape, "row": shape[-1:], "scalar": ()}[bcast]
        shared_b = rand(b_shape) if bcast != "none" else None

        def make():
            return {"a": rand(shape), "b": shared_b if shared_b is not None else rand(shape),
                    "out": torch.empty(shape, device="cuda", dtype=tdt)}
        ours = lambda s: ort.prepare_vector_add(s["out"], s["a"], s["b"])
        peer = lambda s: (lambda: torch.add(s["a"], s["b"], out=s["out"]))
        b_bytes = math.prod(b_shape) * esize
        return make, ours, peer, (2 * numel) * esize + b_bytes, "a"
    if op == "reduce_sum":
        dim = params.get("dim", -1)
        if dim == "all":
            out_shape = ()
        else:
            d = dim % len(shape)
            out_shape = shape[:d] + shape[d + 1:]

        def make():
            return {"x": rand(shape), "out": torch.empty(out_shape, device="cuda", dtype=tdt)}
        if dim == "all":
            ours = lambda s: ort.prepare_reduce_sum(s["out"], s["x"].reshape(-1), dim=0)
            peer = lambda s: (lambda: torch.sum(s["x"].reshape(-1), dim=0, out=s["out"]))
        else:
            ours = lambda s: ort.prepare_reduce_sum(s["out"], s["x"], dim)
            peer = lambda s: (lambda: torch.sum(s["x"], dim=dim, out=s["out"]))
        return make, ours, peer, (numel + math.prod(out_shape)) * esize, "x"
    if op == "softmax":
        def make():
            return {"x": rand(shape), "out": torch.empty(shape, device="cuda", dtype=tdt)}
        ours = lambda s: ort.prepare_softmax(s["out"], s["x"], -1)
        peer = lambda s: (lambda: torch.ops.aten._softmax.out(s["x"], -1, False, out=s["out"]))
        return make, ours, peer, 2 * numel * esize, "x"
    raise SystemExit(f"unknown op {op}")


def reference(op, s, params):
    if op == "copy":
        return s["x"]
    if op == "relu":
        return torch.clamp_min(s["x"].float(), 0)
    if op == "vector_add":
        return s["a"].float() + s["b"].float()
    if op == "reduce_sum":
        dim = params.get("dim", -1)
        x = s["x"].double()
        return x.sum() if dim == "all" else x.sum(dim=dim)
    return torch.softmax(s["x"].double(), -1)


def run_case(op, shape, dtype, params, args, ceiling):
    make, ours, peer, nbytes, _ = make_case(op, shape, dtype, params)
    sets_needed = max(1, min(args.max_sets, math.ceil(ROTATE_BYTES / nbytes)))
    sets = [make() for _ in range(sets_needed)]
    prepared = [ours(s) for s in sets]
    kernel = getattr(prepared[0], "kernel_name", None) or "-"
    # Enough launches for a replay of ~3 ms at the copy ceiling, a multiple of the sets.
    est = nbytes / ceiling + 2e-6
    launches = int(min(max(math.ceil(3e-3 / est), 10, sets_needed), 4000))
    launches = math.ceil(launches / sets_needed) * sets_needed
    t_ours = graph_time([p.run for p in prepared], launches, args.replays)
    prepared[0].run()
    got = sets[0]["out"].double()
    want = reference(op, sets[0], params).double()
    scale = want.abs().max()
    if op == "reduce_sum":  # f32 accumulation error grows with sum |x|, not with the sum
        x = sets[0]["x"].double().abs()
        dim = params.get("dim", -1)
        scale = (x.sum() if dim == "all" else x.sum(dim=dim)).max()
    err = ((got - want).abs().max() / scale.clamp_min(1e-30)).item()
    check = "ok" if err <= TOL[dtype] or (op == "copy" and err == 0) else f"BAD {err:.1e}"
    t_torch = None
    if not args.no_torch:
        t_torch = graph_time([peer(s) for s in sets], launches, args.replays)
    for p in prepared:
        p.destroy()
    del sets, prepared
    torch.cuda.empty_cache()
    return {"op": op, "shape": list(shape), "dtype": dtype, "params": params, "kernel": kernel,
            "bytes": nbytes, "ours_s": t_ours, "torch_s": t_torch, "check": check, "sets": sets_needed,
            "launches": launches}


def case_label(op, shape, params):
    label = "x".join(str(s) for s in shape)
    if op == "reduce_sum":
        label += f" dim={params.get('dim', -1)}"
    if op == "vector_add" and params.get("bcast", "none") != "none":
        label += f" +{params['bcast']}"
    return label


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--op", help="copy, vector_add, relu, reduce_sum, softmax (comma-separated)")
    ap.add_argument("--shape", help="e.g. 8192x4096 or 2^28 (comma-separated for several)")
    ap.add_argument("--dtype", default="f32", help="f32, f16, bf16 (comma-separated)")
    ap.add_argument("--dim", default="-1", help="reduce_sum: axis, or 'all'")
    ap.add_argument("--bcast", default="none", choices=["none", "row", "scalar"],
                    help="vector_add: b is a row of the last dim, or a scalar")
    ap.add_argument("--set", choices=["targets", "issue"], help="a named set of cases instead of --op")
    ap.add_argument("--replays", type=int, default=5)
    ap.add_argument("--max-sets", type=int, default=64, help="most buffer sets rotated per case")
    ap.add_argument("--no-torch", action="store_true", help="skip the PyTorch timings")
    ap.add_argument("--json", help="also write the results to this file")
    args = ap.parse_args()

    if args.set == "targets":
        cases = TARGETS
    elif args.set == "issue":
        cases = issue_set(args.dtype.split(","))
    else:
        if not args.op or not args.shape:
            ap.error("give --op and --shape, or --set")
        dim = args.dim if args.dim == "all" else int(args.dim)
        cases = [(op, parse_shape(s), d, {"dim": dim} if op == "reduce_sum" else
                  ({"bcast": args.bcast} if op == "vector_add" else {}))
                 for op in args.op.split(",") for s in args.shape.split(",") for d in args.dtype.split(",")]

    props = torch.cuda.get_device_properties(0)
    ceiling = copy_ceiling(args.replays)
    print(f"# {props.name}, {props.multi_processor_count} SMs, torch {torch.__version__}, "
          f"library {ort.library_path()}")
    print(f"# copy ceiling (torch copy_, 1 GiB f32, read + write): {ceiling / 1e9:.0f} GB/s")
    head = (f"{'op':<11}{'case':<22}{'dtype':<6}{'kernel':<28}{'ours us':>10}{'GB/s':>7}{'%ceil':>6}"
            f"{'torch us':>10}{'GB/s':>7}{'speedup':>8}  check")
    print(head)
    print("-" * len(head))
    results = []
    t0 = time.time()
    for op, shape, dtype, params in cases:
        r = run_case(op, shape, dtype, params, args, ceiling)
        results.append(r)
        gbs = r["bytes"] / r["ours_s"] / 1e9
        line = (f"{op:<11}{case_label(op, shape, params):<22}{dtype:<6}{r['kernel'][:27]:<28}"
                f"{r['ours_s'] * 1e6:>10.2f}{gbs:>7.0f}{100 * gbs * 1e9 / ceiling:>6.1f}")
        if r["torch_s"] is not None:
            tgbs = r["bytes"] / r["torch_s"] / 1e9
            line += f"{r['torch_s'] * 1e6:>10.2f}{tgbs:>7.0f}{r['torch_s'] / r['ours_s']:>7.2f}x"
        else:
            line += f"{'-':>10}{'-':>7}{'-':>8}"
        print(f"{line}  {r['check']}", flush=True)
    print(f"# {len(results)} cases in {time.time() - t0:.0f} s; "
          f"{sum(r['check'] != 'ok' for r in results)} failed checks")
    if args.json:
        with open(args.json, "w") as f:
            json.dump({"device": props.name, "torch": torch.__version__, "ceiling_Bps": ceiling,
                       "results": results}, f, indent=1)
    return 1 if any(r["check"] != "ok" for r in results) else 0


if __name__ == "__main__":
    sys.exit(main())
