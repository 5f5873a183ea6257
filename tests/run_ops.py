#!/usr/bin/env python3
"""Checks and benchmarks the operators, printing one table row per case as it completes.

  python3 tests/run_ops.py --op softmax --backend cpu --mode test
  python3 tests/run_ops.py --op all --backend nvidia --mode bench --report docs/perf
  python3 tests/run_ops.py --op softmax --mode bench --dtype bf16 --shape 8192x4096,4096x16384
  python3 tests/run_ops.py --op reduce_sum --mode bench --shape 16384x16384 --dim 0 --peers none

test:  every case of tests/cases/<op>.py in every --dtype (default all three): PASS/FAIL
       with the largest error against the float64 reference; then the api-error cases.
bench: first the copy ceiling of this run and the call overhead of a tiny op (relu on 8
       elements: one-shot, prepared, the C operand check alone, the peers, and the ratios
       one-shot / prepared and one-shot / torch eager; on a GPU run for torch tensors on
       the GPU and numpy arrays on the CPU), then every BENCH case of tests/cases/<op>.py
       (the GPU set on GPUs, a smaller one on the CPU; --set picks) in every --dtype
       (default: all three on GPUs, f32 on the CPU): the kernel our plan
       picked, our prepared op and the peers timed the same way in this process on the same
       inputs: numpy on the CPU; on GPUs torch eager, torch.compile, a one-row-per-program
       Triton kernel and QuACK where the op has them (tests/bench/<op>.py), "n/a" with the
       reason where one is not importable or does not take the case. Two rows per case, two
       conditions: dram (buffer sets cycled through --rotate-mib, default 4x the GPU's L2 /
       the host's last-level cache) and hot (one set replayed: a tensor the previous layer just
       wrote). GB/s (each input read once, the output written once), % of the copy ceiling,
       TFLOPS for the compute-bound operators (matmul: 2 M N K operations a call), best peer = the fastest peer's time / ours, and the check of what the timed calls wrote
       (ours and each peer). GPU times: CUDA-graph replay of everyone's calls; "ours loop":
       CUDA events around back-to-back calls from Python. Details: tests/benchlib/bench.py.
--shape narrows to the cases of those input shapes (sizes joined by x, 2^k allowed; repeat
       the flag or separate shapes by commas; matmul: M x K x N, or M x K for N = K); a shape
       no case has becomes a contiguous case (softmax, reduce_sum: over --dim, default the
       last; reduce_sum --dim all: every element).
--peers NAMES: the peers to run (comma-separated, e.g. torch,triton; "none": ours alone).
--variant NAME|all: run the kernel variant NAME (operator_runtime.variants(op, backend)), or
       every one ("all": in test mode "auto", the plan's choice, and the ladder, never
       "student", which runs only by name; in bench mode the backend's list as it is).
       Default: the plan's choice. In bench mode it prints the ladder: per case, one row per
       variant (plain to fastest) with time, GB/s, % of the copy ceiling and the gain over the
       step before, then the main peer (torch / numpy) for reference. A variant that cannot
       run a layout is reported as SKIP with the reason.
--json PATH / --csv PATH (bench) write every figure: min / median / max per case,
       implementation and condition (tests/compare_bench.py compares such records).
--report DIR (bench) writes DIR/report.md, DIR/bandwidth.png, DIR/results.json and
       DIR/results.csv.
overhead: the call overhead section of bench alone.
The exit status is non-zero when any case fails (a wrong result, or an error).
"""

import argparse
import random
import re
import sys
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path[:0] = [str(REPO / "python"), str(REPO / "tests")]  # runs from a checkout as is

import operator_runtime as ort  # noqa: E402
from operator_runtime_testing import DTYPES, backends, run_case, run_error_case  # noqa: E402
from operator_runtime_testing.backends import (  # noqa: E402
    is_not_supported, variant_unavailable, variants_for)
from benchlib.bench import (  # noqa: E402
    MAX_SETS, Workbench, measure_ceiling, measure_overhead, run_bench)
from operator_runtime_testing.cases import BenchCase, case, case_seed  # noqa: E402
from benchlib.report import (  # noqa: E402
    Table, best_peer, command_line, environment, fmt_err, fmt_time, peer_cell, write_csv,
    write_json, write_report)

import bench as bench_modules  # noqa: E402  (tests/bench)
import cases as case_modules  # noqa: E402  (tests/cases)

NUM_INPUTS = {"vector_add": 2}
PEER_NAMES = ("numpy", "torch", "compile", "triton", "quack")


def step_notes(op, backend, variants):
    """What each ladder step changes, from the head comment of ops/<op>/<backend>/ladder.*
    (lines `//   name  idea`, continued by deeper-indented lines); steps not found there
    are left out."""
    head = []
    for f in sorted((REPO / "ops" / op / backend).glob("ladder.*")):
        head = [ln for ln in f.read_text().splitlines() if ln.startswith("//")]
    notes, name = {}, None
    for line in head:
        m = re.match(r"//   (\w+)\s{2,}(.*)", line)
        if m and m.group(1) in variants:
            name, notes[m.group(1)] = m.group(1), m.group(2)
        elif name and re.match(r"//\s{6,}\S", line):
            notes[name] += " " + line[2:].strip()
        else:
            name = None
    return [f"  {v:<12} {notes[v]}" for v in variants if v in notes]


def footnotes(placeholder_ops, over_ceiling, peer):
    """The table's notes: peers that compute placeholder math, and %ceil above 100%."""
    for op in sorted(placeholder_ops):
        print(f"* {op}: the {peer} peer is the generator's placeholder (tests/bench/{op}.py, "
              f"PLACEHOLDER_PEER): it computes other math, so its speedup compares nothing yet")
    if over_ceiling:
        print("%ceil above 100%: that case's buffers stay in the caches between calls (a GPU's L2, "
              "a CPU's caches), which "
              "serve them faster than the memory the copy ceiling is measured on (a cache figure, "
              "not memory bandwidth)")


def parse_shape(text):
    sizes = []
    for part in text.lower().split("x"):
        base, _, exp = part.partition("^")
        sizes.append(int(base) ** int(exp) if exp else int(base))
    return tuple(sizes)


def parse_args():
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--op", default="all", choices=("all",) + case_modules.OPS)
    p.add_argument("--backend", default="auto",
                   choices=("auto", "cpu", "nvidia", "metax", "tilelang"))
    p.add_argument("--mode", default="test", choices=("test", "bench", "all", "overhead"),
                   help="overhead: only the bench's call overhead section (one-shot, prepared "
                        "and torch eager on a tiny op, and their ratios)")
    p.add_argument("--dtype", default=None,
                   help="comma-separated from f32,f16,bf16 (default: all; bench on the CPU: f32)")
    p.add_argument("--shape", action="append", default=None,
                   help="narrow to these input shapes, e.g. 8192x4096 or 2^28 (repeatable, or "
                        "comma-separated)")
    p.add_argument("--variant", default=None, metavar="NAME|all",
                   help="kernel variant to run, or all (default: the plan's choice)")
    p.add_argument("--seed", type=int, default=None, help="base seed (default: fresh, printed)")
    p.add_argument("--set", default="auto", choices=("auto", "gpu", "cpu"),
                   help="bench: which benchmark set (default: gpu on GPUs, cpu on the CPU)")
    p.add_argument("--dim", default=None,
                   help="the dim of --shape cases (softmax, reduce_sum; default -1; reduce_sum: "
                        "'all' reduces every element)")
    p.add_argument("--peers", default=None,
                   help="bench: the peers to run, comma-separated from numpy, torch, compile, "
                        "triton, quack, or 'none' (default: every one the op has)")
    p.add_argument("--json", metavar="PATH", default=None,
                   help="bench: write every figure (min/median/max per case, implementation "
                        "and condition) as JSON")
    p.add_argument("--csv", metavar="PATH", default=None, help="bench: the same as CSV")
    p.add_argument("--report", metavar="DIR", default=None,
                   help="bench: write DIR/report.md, DIR/bandwidth.png, DIR/results.json and "
                        "DIR/results.csv")
    p.add_argument("--repeats", type=int, default=5, help="bench: timed repeats (the median)")
    p.add_argument("--rotate-mib", type=float, default=None,
                   help="bench: cycle buffer sets until a case's working set is this large "
                        "(default: 4x the GPU's L2 / the host's last-level cache; 0: one set)")
    args = p.parse_args()
    for name in (args.dtype or "").split(","):
        if name and name not in DTYPES:
            p.error(f"--dtype {name!r}: choose from {', '.join(DTYPES)}")
    if args.shape:
        shapes = []
        for text in args.shape:
            for item in filter(None, text.split(",")):
                try:
                    shapes.append(parse_shape(item.strip()))
                except ValueError:
                    p.error(f"--shape {item!r}: expected sizes joined by 'x', e.g. 4096x4096")
        args.shape = list(dict.fromkeys(shapes))
        if args.op != "all":  # --op all: each op takes the shapes it reads (op_shapes)
            for shape in args.shape:
                try:
                    shape_inputs(args.op, shape)
                except ValueError as exc:
                    p.error(f"--shape {'x'.join(map(str, shape))}: {exc}")
    if args.dim is not None and args.dim != "all":
        try:
            args.dim = int(args.dim)
        except ValueError:
            p.error(f"--dim {args.dim!r}: an integer, or all")
    if args.dim is not None and not args.shape:
        p.error("--dim applies to --shape cases: give --shape too")
    if args.peers is not None:
        args.peers = () if args.peers == "none" else tuple(filter(None, args.peers.split(",")))
        unknown = set(args.peers) - set(PEER_NAMES)
        if unknown:
            p.error(f"--peers {','.join(sorted(unknown))}: choose from {', '.join(PEER_NAMES)}")
    for flag in ("report", "json", "csv"):
        if getattr(args, flag) and args.mode == "test":
            p.error(f"--{flag} needs --mode bench (or all)")
    if args.report and args.variant:
        p.error("--report records the plan's choice: leave out --variant")
    return args


def dtypes_for(args, mode, on_gpu=False):
    if args.dtype:
        return [d for d in args.dtype.split(",") if d]
    return list(DTYPES) if mode == "test" or on_gpu else ["f32"]


def shape_inputs(op, shape):
    """The input shapes of a --shape case: as the op's case module reads it (matmul: M x K x N),
    else the shape for every input."""
    reader = getattr(case_modules.load(op), "shape_inputs", None)
    return tuple(reader(shape)) if reader else (shape,) * NUM_INPUTS.get(op, 1)


def op_shapes(op, shapes):
    """The --shape shapes that op reads (with --op all, matmul skips a one-size shape)."""
    readable = []
    for shape in shapes:
        try:
            shape_inputs(op, shape)
            readable.append(shape)
        except ValueError:
            pass
    return readable


def shape_params(op, dim=None):
    """The params of a --shape case: --dim (default the last) for the ops that take one."""
    if "dim" not in case_modules.load(op).OP.inplace_params:
        return {}
    return {"dim": -1 if dim is None else (None if dim == "all" else dim)}


def run_tests(ops, args, target, seed):
    columns = [("op", -10), ("case", -36), ("dtype", -5)]
    if args.variant:
        columns.append(("variant", -18))
    table = Table(columns + [("result", -6), ("max err", 9), ("detail", -1)])
    table.header()
    failed = total = skipped = 0
    for op in ops:
        module = case_modules.load(op)
        cases = module.CASES
        if args.shape:
            cases = [case("x".join(map(str, s)), *shape_inputs(op, s),
                          params=shape_params(op, args.dim)) for s in op_shapes(op, args.shape)]
        variants = variants_for(target, op, args.variant) if args.variant else ["auto"]
        for c in cases:
            for dtype in dtypes_for(args, "test"):
                for variant in variants:
                    s = case_seed(seed, op, c.name, dtype)
                    why = variant_unavailable(target, op, variant)
                    result = None
                    try:
                        if why:
                            raise ort.OperatorRuntimeError(why)
                        r = run_case(module.OP, c, dtype, target.lib, target.backend, s,
                                     torch_check=target.on_gpu,
                                     variant=None if variant == "auto" else variant)
                        ok, err, detail = r.ok, r.max_err, r.message
                    except Exception as exc:  # noqa: BLE001 (a crash is this case's failure)
                        ok, err, detail = False, None, f"{type(exc).__name__}: {exc}"
                        if is_not_supported(exc):
                            result, detail = "SKIP", str(exc)
                    cells = [op, c.name, dtype] + ([variant] if args.variant else [])
                    if result == "SKIP":
                        skipped += 1
                        table.row(*cells, "SKIP", "-", detail)
                        continue
                    total += 1
                    failed += not ok
                    table.row(*cells, "PASS" if ok else "FAIL", fmt_err(err),
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
    skips = f", {skipped} skipped (the variant cannot run that layout)" if skipped else ""
    print(f"\ntest: {total - failed} passed, {failed} failed{skips}", flush=True)
    return failed


def bench_cases(op, module, args, target):
    """The op's benchmark set, narrowed by --shape (a shape no case has becomes one)."""
    which = args.set if args.set != "auto" else ("gpu" if target.on_gpu else "cpu")
    cases = list(module.BENCH[which])
    if not args.shape:
        return cases
    known = cases + [c for c in module.BENCH["gpu" if which == "cpu" else "cpu"]
                     if c.name not in {k.name for k in cases}]
    picked = []
    for shape in op_shapes(op, args.shape):
        params = shape_params(op, args.dim)
        inputs = shape_inputs(op, shape)
        match = [c for c in known if tuple(map(tuple, c.inputs)) == inputs
                 and (args.dim is None or c.params.get("dim", -1) == params.get("dim"))]
        name = "x".join(map(str, shape)) + (f" dim={args.dim}" if args.dim is not None else "")
        series = ""
        if op == "reduce_sum":
            series = {None: "reduce_sum all", 0: "reduce_sum first axis"}.get(
                params["dim"], "reduce_sum last axis")
        picked += match or [BenchCase(name, inputs, params, series)]
    return picked


def run_peers(ops, args, target):
    """The peer columns of this run: the main peer, then the GPU peers of the ops run."""
    lib = target.lib.name
    names = [lib]
    if lib == "torch":
        for op in ops:
            names += [n for n in getattr(bench_modules.load(op), "GPU_PEERS", {}) if n not in names]
    return [n for n in names if args.peers is None or n in args.peers]


def print_overhead(wb, target):
    """Measures and prints the call overhead section (bench.measure_overhead); returns it."""
    overhead = measure_overhead(wb)
    print("call overhead, relu on 8 float32 elements (host time per call: the best of 40 "
          "rounds of back-to-back calls, the rows taking turns"
          + ("; synchronized after each round" if target.on_gpu else "") + "):", flush=True)
    for what, seconds, note in overhead:
        if seconds is None and not note.startswith("n/a"):  # a summary row
            print(f"  {what}: {note}", flush=True)
            continue
        print(f"  {what:<54} {fmt_time(seconds):>10}" + (f"  ({note})" if note else ""),
              flush=True)
    print(flush=True)
    return overhead


def run_benchmarks(ops, args, target, seed):
    """Prints the copy ceiling and the call overhead, then two rows per case (dram, hot) as it
    completes; returns the number of failed cases (and writes the records asked for)."""
    started = time.perf_counter()
    rotate = None if args.rotate_mib is None else int(args.rotate_mib * 2**20)
    wb = Workbench(target, seed, repeats=args.repeats, rotate_bytes=rotate)
    plan = [(op, c, dtype) for op in ops for c in bench_cases(op, case_modules.load(op), args,
                                                              target)
            for dtype in dtypes_for(args, "bench", target.on_gpu)]
    peers = run_peers(ops, args, target)
    peer = peers[0] if peers else target.lib.name  # the main peer of the summaries
    timing = "CUDA graph replay" if target.on_gpu else "back-to-back calls"
    print(f"bench: {len(plan)} cases; times are medians of {args.repeats} repeats ({timing}); "
          f"conditions: dram = buffer sets cycled up to {wb.rotate_bytes / 2**20:.0f} MiB per "
          f"case, hot = one set replayed; peers: {', '.join(peers) or 'none'}", flush=True)

    ceiling = measure_ceiling(wb, bench_modules.load("copy"), case_seed(seed, "ceiling"))
    print(f"copy ceiling ({ceiling.nbytes / 2**30:g} GiB read + written, float32): ours "
          f"{fmt_time(ceiling.ours.best_s)} = {ceiling.ours_gbps:.0f} GB/s, {ceiling.peer_name} "
          f"{fmt_time(ceiling.peer.best_s)} = {ceiling.peer_gbps:.0f} GB/s -> ceiling "
          f"{ceiling.gbps:.0f} GB/s ({ceiling.source})\n", flush=True)
    overhead = print_overhead(wb, target)

    env = cmd = None
    if args.report or args.json or args.csv:
        env, cmd = environment(target, ort.library_path()), command_line()
    outputs = [(args.json, args.csv)]
    if args.report:
        outputs.append((f"{args.report}/results.json", f"{args.report}/results.csv"))
    results, failures = [], []

    def save(quiet=True):
        """Writes the JSON / CSV records asked for; after every case too, so that a run cut
        short leaves what it measured."""
        for json_path, csv_path in outputs:
            if json_path:
                write_json(json_path, env=env, command=cmd, seed=seed, ceiling=ceiling,
                           rotate_bytes=wb.rotate_bytes, results=results, failures=failures,
                           overhead=overhead, quiet=quiet)
            if csv_path:
                write_csv(csv_path, results, ceiling, quiet=quiet)

    columns = [("#", 7), ("op", -10), ("case", -20), ("dtype", -5), ("kernel", -26),
               ("cond", -4), ("ours", 10), ("GB/s", 7), ("%ceil", 5), ("TFLOPS", 6)]
    columns += [(name, 10) for name in peers]
    columns += [("best peer", -14)]
    if target.on_gpu:
        columns += [("ours loop", 10)]
    columns += [("sets", 4), ("check", -5)]
    table = Table(columns)
    table.header()
    placeholder_ops, over_ceiling = set(), False
    for i, (op, c, dtype) in enumerate(plan, 1):
        module, bench_module = case_modules.load(op), bench_modules.load(op)
        progress = f"{i}/{len(plan)}"
        try:
            r = run_bench(module.OP, bench_module, c, dtype, wb, case_seed(seed, op, c.name, dtype),
                          peer_names=args.peers)
        except Exception as exc:  # noqa: BLE001 (reported as this case's failure)
            message = f"{type(exc).__name__}: {exc}"
            failures.append((op, c.name, dtype, message))
            table.row(progress, op, c.name, dtype, f"FAIL: {message}")
            wb.release()
            save()
            continue
        results.append(r)
        save()
        mark = "*" if getattr(bench_module, "PLACEHOLDER_PEER", False) else ""
        placeholder_ops |= {op} if mark else set()
        over_ceiling |= r.nbytes / r.ours_s / 1e9 > ceiling.gbps
        for cond in ("dram", "hot"):
            t = r.ours[cond]
            gbps = r.nbytes / t.best_s / 1e9
            first = cond == "dram"
            cells = ([progress, op, c.name, dtype, r.kernel or "-"] if first else [""] * 5)
            cells += [cond, fmt_time(t.best_s), f"{gbps:.1f}", f"{100 * gbps / ceiling.gbps:.0f}%",
                      f"{r.tflops(cond):.2f}" if r.flops else "-"]
            cells += [peer_cell(r, name, cond) for name in peers]
            name, sec = best_peer(r, cond)
            cells.append(f"{sec / t.best_s:.2f}x{mark} {name}" if name else "-")
            if target.on_gpu:
                cells.append(fmt_time(t.loop_s))
            cells += [r.sets if first else 1,
                      ("ok" if r.ok else f"FAIL ({r.message})") if first else ""]
            table.row(*cells)
    failed = len(failures) + sum(not r.ok for r in results)
    wall = time.perf_counter() - started
    footnotes(placeholder_ops, over_ceiling, peer)
    print(f"\nbench: {len(plan)} cases, {failed} failed ({wall:.0f} s)", flush=True)
    short = [f"{r.op} {r.case} {r.dtype}" for r in results
             if r.sets > 1 and r.sets * r.nbytes < wb.rotate_bytes]
    if short:
        print(f"  dram: {len(short)} cases cycle less than {wb.rotate_bytes / 2**20:.0f} MiB "
              f"(at most {MAX_SETS} buffer sets): {', '.join(short[:3])}"
              + (f" and {len(short) - 3} more" if len(short) > 3 else ""), flush=True)
    notes = {}
    for r in results:
        for name, pr in r.peers.items():
            if pr.why or not pr.ok:
                key = (name, pr.why or f"FAIL: {pr.message}")
                notes.setdefault(key, []).append(f"{r.op} {r.case} {r.dtype}")
    for (name, why), labels in notes.items():
        more = f" and {len(labels) - 3} more" if len(labels) > 3 else ""
        print(f"  {name}: {why}: {', '.join(labels[:3])}{more}", flush=True)

    save(quiet=False)
    if args.report:
        note = (f"Each time is the median of {args.repeats} repeats of many back-to-back calls, "
                f"in two conditions: `dram`, whole passes over the case's buffer sets (column "
                f"`sets`: cases moving less than {wb.rotate_bytes / 2**20:.0f} MiB cycle that many "
                f"input/output sets, each with its own prepared op, so the working set exceeds "
                f"the caches), and `hot`, one set replayed (its input in the cache when it fits, "
                f"as a tensor the previous layer just wrote; a case with one set has one "
                f"measurement for both). ")
        if target.on_gpu:
            note += ("GPU: every implementation's calls are captured in a CUDA graph and the "
                     "replay is timed with CUDA events (the kernels' own time); `ours loop` is "
                     "CUDA events around the same calls made back to back from Python (adds each "
                     "call's Python and launch cost). The peers: torch eager (`torch`), "
                     "torch.compile with inductor, static shapes (`compile`), a one-row-per-"
                     "program Triton kernel with the whole row in registers (`triton`), QuACK's "
                     "softmax (`quack`), each where importable and able to take the case. ")
        else:
            note += "CPU: wall time (perf_counter) around the calls. "
        note += ("The peers run in the same process on the same inputs and write output "
                 "buffers of their own, one per buffer set, as ours does. GB/s = (each input "
                 "read once + the output written once) / time; `% ceiling` is of the copy "
                 "ceiling below; speedups are peer time / our time. `check`: the outputs the "
                 "timed calls wrote (ours: first and last buffer set; each peer: the first) "
                 "against a float64 reference.")
        write_report(args.report, env, cmd, ceiling, results, failures, peer=peer, seed=seed,
                     wall_s=wall, timing_note=note)
    return failed


def run_ladders(ops, args, target, seed):
    """bench --variant: per case and dtype, one row per variant (plain to fastest) with the
    gain over the step before, then the peer; returns the number of failed rows."""
    started = time.perf_counter()
    peer = "numpy" if target.lib.name == "numpy" else "torch"
    rotate = None if args.rotate_mib is None else int(args.rotate_mib * 2**20)
    wb = Workbench(target, seed, repeats=args.repeats, rotate_bytes=rotate)
    ceiling = measure_ceiling(wb, bench_modules.load("copy"), case_seed(seed, "ceiling"))
    print(f"copy ceiling: {ceiling.gbps:.0f} GB/s ({ceiling.source}); times are medians of "
          f"{args.repeats} repeats ({'CUDA graph replay' if target.on_gpu else 'back-to-back calls'})"
          f"\n", flush=True)
    table = Table([("op", -10), ("case", -20), ("dtype", -5), ("variant", -18), ("kernel", -26),
                   ("time", 10), ("GB/s", 7), ("%ceil", 5), ("TFLOPS", 6), ("gain", 7), ("check", -5)])
    for op in ops if args.variant == "all" else ():
        notes = step_notes(op, target.resolved, ort.variants(op, target.resolved))
        if notes:
            print(f"{op}: the ladder's steps on {target.resolved}, each row's gain is over the row "
                  f"above", *notes, sep="\n", end="\n\n", flush=True)
    table.header()
    failed, placeholder_ops, over_ceiling = 0, set(), False
    for op in ops:
        module, bench_module = case_modules.load(op), bench_modules.load(op)
        if args.variant == "all":  # the backend's list as it is: "student" first when built
            variants = ort.variants(op, target.resolved)
        else:
            variants = [args.variant]
        for c in bench_cases(op, module, args, target):
            for dtype in dtypes_for(args, "bench", target.on_gpu):
                s = case_seed(seed, op, c.name, dtype)
                before = last = None
                for variant in variants:
                    why = variant_unavailable(target, op, variant)
                    try:
                        if why:
                            raise ort.OperatorRuntimeError(why)
                        r = run_bench(module.OP, bench_module, c, dtype, wb, s,
                                      variant=None if variant == "auto" else variant,
                                      peer_names=(target.lib.name,)
                                      if variant == variants[-1] else ())
                    except Exception as exc:  # noqa: BLE001 (reported in its row)
                        wb.release()
                        skip = is_not_supported(exc)
                        failed += not skip
                        table.row(op, c.name, dtype, variant,
                                  ("SKIP: " if skip else "FAIL: ") + f"{type(exc).__name__}: {exc}")
                        continue
                    gbps = r.nbytes / r.ours_s / 1e9
                    over_ceiling |= gbps > ceiling.gbps
                    gain = f"{before / r.ours_s:.2f}x" if before else "-"
                    before = r.ours_s
                    last = r
                    failed += not r.ok
                    table.row(op, c.name, dtype, variant, r.kernel or "-", fmt_time(r.ours_s),
                              f"{gbps:.1f}", f"{100 * gbps / ceiling.gbps:.0f}%",
                              f"{r.tflops():.2f}" if r.flops else "-", gain,
                              "ok" if r.ok else f"FAIL ({r.message})")
                if last is not None and last.peer_s is not None:
                    gbps = last.nbytes / last.peer_s / 1e9
                    mark = "*" if getattr(bench_module, "PLACEHOLDER_PEER", False) else ""
                    placeholder_ops |= {op} if mark else set()
                    table.row(op, c.name, dtype, f"({peer}{mark})", "-", fmt_time(last.peer_s),
                              f"{gbps:.1f}", f"{100 * gbps / ceiling.gbps:.0f}%",
                              f"{last.flops / last.peer_s / 1e12:.2f}" if last.flops else "-",
                              f"{last.peer_s / last.ours_s:.2f}x" if last.ours_s else "-", "")
    footnotes(placeholder_ops, over_ceiling, peer)
    print(f"\nbench ladders: {failed} failed ({time.perf_counter() - started:.0f} s); gain: the "
          f"step before's time / this step's (the peer row: {peer}'s time / the last step's)",
          flush=True)
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
        failed += (run_ladders if args.variant else run_benchmarks)(ops, args, target, seed)
    if args.mode == "overhead":
        print_overhead(Workbench(target, seed, repeats=args.repeats), target)
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
