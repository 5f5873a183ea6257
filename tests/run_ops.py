#!/usr/bin/env python3
"""Checks and benchmarks the operators, printing one table row per case as it completes.

  python tests/run_ops.py --op softmax --backend cpu --mode test
  python tests/run_ops.py --op all --mode bench --dtype f32 --shape 4096x4096

test:  every case of tests/cases/<op>.py in every --dtype (default all three): PASS/FAIL
       with the largest error against the float64 reference; then the api-error cases.
bench: the BENCH cases (default f32): our prepared op against numpy (CPU) or torch (GPU),
       timed the same way in this process; GB/s counts each input read once and the output
       written once; speedup = peer time / our time.
--shape replaces the cases with one contiguous case of that shape (dim -1).
The exit status is non-zero when any case fails.
"""

import argparse
import random
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path[:0] = [str(REPO / "python"), str(REPO / "tests")]  # runs from a checkout as is

import operator_runtime as ort  # noqa: E402
from operator_runtime_testing import DTYPES, backends, run_case, run_error_case  # noqa: E402
from operator_runtime_testing.bench import run_bench  # noqa: E402
from operator_runtime_testing.cases import BenchCase, case, case_seed  # noqa: E402
from operator_runtime_testing.report import Table, fmt_err, fmt_gbps, fmt_time  # noqa: E402

import bench as bench_modules  # noqa: E402  (tests/bench)
import cases as case_modules  # noqa: E402  (tests/cases)

NUM_INPUTS = {"vector_add": 2}


def parse_args():
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--op", default="all", choices=("all",) + case_modules.OPS)
    p.add_argument("--backend", default="auto",
                   choices=("auto", "cpu", "nvidia", "metax", "tilelang"))
    p.add_argument("--mode", default="test", choices=("test", "bench", "all"))
    p.add_argument("--dtype", default=None,
                   help="comma-separated from f32,f16,bf16 (test default: all; bench: f32)")
    p.add_argument("--shape", default=None, help="one shape instead of the cases, e.g. 4096x4096")
    p.add_argument("--seed", type=int, default=None, help="base seed (default: fresh, printed)")
    args = p.parse_args()
    for name in (args.dtype or "").split(","):
        if name and name not in DTYPES:
            p.error(f"--dtype {name!r}: choose from {', '.join(DTYPES)}")
    if args.shape:
        try:
            args.shape = tuple(int(s) for s in args.shape.lower().split("x"))
        except ValueError:
            p.error(f"--shape {args.shape!r}: expected sizes joined by 'x', e.g. 4096x4096")
    return args


def dtypes_for(args, mode):
    if args.dtype:
        return [d for d in args.dtype.split(",") if d]
    return list(DTYPES) if mode == "test" else ["f32"]


def shape_params(op):
    return {"dim": -1} if op in ("reduce_sum", "softmax") else {}


def run_tests(ops, args, target, seed):
    table = Table([("op", -10), ("case", -36), ("dtype", -5), ("result", -6), ("max err", 9),
                   ("detail", -1)])
    table.header()
    failed = total = 0
    for op in ops:
        module = case_modules.load(op)
        cases = module.CASES
        if args.shape:
            shapes = (args.shape,) * NUM_INPUTS.get(op, 1)
            cases = [case("x".join(map(str, args.shape)), *shapes, params=shape_params(op))]
        for c in cases:
            for dtype in dtypes_for(args, "test"):
                s = case_seed(seed, op, c.name, dtype)
                try:
                    r = run_case(module.OP, c, dtype, target.lib, target.backend, s,
                                 torch_check=target.on_gpu)
                    ok, err, detail = r.ok, r.max_err, r.message
                except Exception as exc:  # noqa: BLE001 (a crash is this case's failure)
                    ok, err, detail = False, None, f"{type(exc).__name__}: {exc}"
                total += 1
                failed += not ok
                table.row(op, c.name, dtype, "PASS" if ok else "FAIL", fmt_err(err),
                          "" if ok else f"{detail} (seed {s})")
        if args.shape:
            continue
        for e in module.ERROR_CASES:
            if target.lib.name not in e.libs:
                continue
            ok, detail = run_error_case(e, target.lib, target.backend)
            total += 1
            failed += not ok
            table.row(op, f"error:{e.name}", "-", "PASS" if ok else "FAIL", "-",
                      "" if ok else detail)
    print(f"\ntest: {total - failed} passed, {failed} failed", flush=True)
    return failed


def run_benchmarks(ops, args, target, seed):
    peer = "numpy" if target.lib.name == "numpy" else "torch"
    columns = [("op", -10), ("case", -20), ("dtype", -5), ("ours", 10), ("GB/s", 7)]
    if target.on_gpu:
        columns += [("graph", 10)]
    columns += [(peer, 10), ("GB/s", 7)]
    if target.on_gpu:
        columns += [("graph", 10)]
    columns += [("speedup", 7), ("check", -5)]
    table = Table(columns)
    table.header()
    failed = 0
    for op in ops:
        module, bench_module = case_modules.load(op), bench_modules.load(op)
        cases = module.BENCH["gpu" if target.on_gpu else "cpu"]
        if args.shape:
            shapes = (args.shape,) * NUM_INPUTS.get(op, 1)
            cases = [BenchCase("x".join(map(str, args.shape)), shapes, shape_params(op))]
        for c in cases:
            for dtype in dtypes_for(args, "bench"):
                try:
                    r = run_bench(module.OP, bench_module, c, dtype, target,
                                        case_seed(seed, op, c.name, dtype))
                except Exception as exc:  # noqa: BLE001 (reported as this case's failure)
                    failed += 1
                    table.row(op, c.name, dtype, f"FAIL: {type(exc).__name__}: {exc}")
                    continue
                failed += not r.ok
                cells = [op, c.name, dtype, fmt_time(r.ours_s), fmt_gbps(r.nbytes, r.ours_s)]
                if target.on_gpu:
                    cells.append(fmt_time(r.ours_graph_s))
                cells += [fmt_time(r.peer_s), fmt_gbps(r.nbytes, r.peer_s)]
                if target.on_gpu:
                    cells.append(fmt_time(r.peer_graph_s))
                cells += [f"{r.peer_s / r.ours_s:.2f}x",
                          "ok" if r.ok else f"FAIL (max rel diff {r.max_rel_diff:.2e})"]
                table.row(*cells)
    print(f"\nbench: {failed} failed", flush=True)
    return failed


def main():
    args = parse_args()
    target = backends.select(args.backend)
    if target.skip_reason:
        print(f"run_ops: cannot run --backend {args.backend}: {target.skip_reason}",
              file=sys.stderr)
        return 2
    seed = args.seed if args.seed is not None else random.SystemRandom().randrange(2**31)
    ops = case_modules.OPS if args.op == "all" else (args.op,)
    print(f"library {ort.library_path()}\nbackend {args.backend} -> {target.resolved} "
          f"({target.lib.name} arrays), seed {seed}\n", flush=True)
    failed = 0
    if args.mode in ("test", "all"):
        failed += run_tests(ops, args, target, seed)
    if args.mode in ("bench", "all"):
        if args.mode == "all":
            print()
        failed += run_benchmarks(ops, args, target, seed)
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
