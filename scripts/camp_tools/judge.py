"""camp.py judge OP: the exercise judged like a contest, then scored against this machine.

The submission is the student variant of OP (the file `camp.py exercise` made, built as
`camp.py check` builds it). It must pass every stage, in this order; the first stage that
fails rejects it, with the reason in plain words:

  guard    the output lies between two guard bands of NaN; a kernel that writes outside
           its output changes them; the results are checked on odd shapes
  stale    the same buffers run twice with different values; a kernel that remembers a
           result by buffer address (or skips work it has "seen") returns the old output
  hazards  (NVIDIA) compute-sanitizer's memcheck, racecheck and initcheck over the student's
           kernels on small cases; the first report with its source line. A wrong result in
           any stage on the GPU is followed by racecheck: a race found is the verdict, since
           it explains the wrong result
  cases    every correctness case of `check` (odd, unaligned and strided shapes, special
           values, every dtype), on a new seed
  timing   the benchmark's own timing on the judge set (buffers rotated through 4x the
           last-level cache, a CUDA graph on a GPU, new random data each run), then the
           outputs of the timed calls checked again

Score: per case the time, GB/s and the fraction of the copy ceiling measured in the same
run (a copy of 1 GiB on a GPU, 256 MiB on the CPU), next to the production kernel and each
ladder step; the op's score is the geometric mean of those fractions. matmul is compute-bound,
so its fraction is of the peer library instead: the student's TFLOPS over those of the peer
timed in the same run on the same inputs (numpy's np.matmul, OpenBLAS, on the CPU;
torch.matmul, cuBLAS, on a GPU). The best score per op is kept in
<student dir>/leaderboard-<host>.json.
"""

import json
import math
import os
import random
import re
import socket
import subprocess
import sys
import time
from pathlib import Path

from . import exercise

GUARD = 4096  # elements of NaN on each side of the guarded output
# Every buffer a stage made stays alive until the judge ends, so no later stage gets one of
# their addresses back (a result cached by address must be caught by `stale`, not by luck).
_KEEP = []
SANITIZER_TOOLS = ("memcheck", "racecheck", "initcheck")

# The judge set: dense shapes a first kernel can take, large enough to leave the caches.
# matmul's are (M, K, N), sized so that a plain tiled kernel takes milliseconds, not seconds.
JUDGE_SHAPES = {
    ("elementwise", "cpu"): [(1 << 20,), (1 << 24,)],
    ("elementwise", "nvidia"): [(1 << 20,), (1 << 26,)],
    ("axis", "cpu"): [(1024, 1024), (8192, 1024)],
    ("axis", "nvidia"): [(1024, 1024), (16384, 1024), (4096, 4096)],
    ("matmul", "cpu"): [(256, 256, 256), (512, 512, 512)],
    ("matmul", "nvidia"): [(1024, 1024, 1024), (2048, 2048, 2048)],
}
# Small cases for the probes and the sanitizers: odd sizes, several rows. matmul (M, K, N):
# no size a multiple of 16 or 32 (the tails of every tile), K over more than one 32-deep tile.
PROBE_SHAPES = {"elementwise": [(1000,), (4099,)], "axis": [(3, 37), (37, 1000)],
                "matmul": [(37, 45, 29), (65, 130, 33)]}
DEFAULT_PARAMS = {"relu": {"negative_slope": 0.1}, "reduce_sum": {"dim": -1},
                  "softmax": {"dim": -1}}


def register(sub):
    text = "check OP's student variant like a contest judge, then time and score it"
    p = sub.add_parser("judge", help=text, description=text)
    p.add_argument("op", choices=sorted(exercise.scaffolds.OPS))
    p.add_argument("--backend", default=None, choices=("cpu", "nvidia"),
                   help="the backend of the variant (default: the one with an exercise file)")
    p.add_argument("--student-dir", type=Path, default=None,
                   help="where student/<backend>/ files go (default: <repo>/student)")
    p.add_argument("--build-dir", type=Path, default=None,
                   help="the build folder (default: the one whose library Python loads, as for "
                        "check)")
    p.add_argument("--dtype", default=None, help="comma-separated dtypes to time (default: "
                                                 "f32,bf16; matmul on the CPU: f32, the one "
                                                 "numpy has a BLAS kernel for)")
    p.add_argument("--no-timing", action="store_true",
                   help="stop after the correctness stages (no score)")
    p.set_defaults(func=cmd_judge)


# ---- stages ---------------------------------------------------------------------------------

class Rejected(Exception):
    """A stage's verdict: the submission is wrong, for `reason`."""

    def __init__(self, stage, reason):
        super().__init__(f"{stage}: {reason}")
        self.stage, self.reason = stage, reason


def _setup(op, backend):
    """(target, case module, bench module) with the library the build made."""
    import cases as case_modules
    from operator_runtime_testing import backends

    import bench as bench_modules

    target = backends.select(backend)
    if target.skip_reason:
        raise SystemExit(f"camp judge: cannot run on {backend}: {target.skip_reason}")
    return target, case_modules.load(op), bench_modules.load(op)


def num_inputs(op):
    return 2 if op in ("vector_add", "matmul") else 1


def input_shapes(op, shape):
    """The input shapes of one judge or probe case: matmul's (M, K, N) is A (M, K) and
    B (K, N); the other operators take `shape` for every input."""
    if exercise.scaffolds.OPS[op]["kind"] == "matmul":
        m, k, n = shape
        return [(m, k), (k, n)]
    return [tuple(shape)] * num_inputs(op)


def shape_text(op, shape):
    """A case's shape in a verdict: (3, 37); matmul: 37x45x29 (M x K x N)."""
    if exercise.scaffolds.OPS[op]["kind"] == "matmul":
        return "x".join(map(str, shape)) + " (M x K x N)"
    return str(tuple(shape))


def default_dtypes(op, backend):
    """The dtypes timed without --dtype: f32 and bf16; matmul on the CPU f32 only, since its
    score needs the peer and numpy has no 16-bit GEMM."""
    kind = exercise.scaffolds.OPS[op]["kind"]
    return "f32" if (kind, backend) == ("matmul", "cpu") else "f32,bf16"


def _inputs(target, rng, module, shape, dtype):
    return [target.lib.randn(rng, s, dtype) for s in input_shapes(module.OP.name, shape)]


def _out_shape(module, inputs, params):
    return tuple(module.OP.out_shape([tuple(x.shape) for x in inputs], params))


def check(op, bench, lib, dtype, out, inputs, params):
    """(ok, max_abs_err, message): `out` against the float64 reference, as the bench checks."""
    from benchlib.bench import Checker

    return Checker(op, bench, lib, dtype, inputs, params)(out)


def _prepare(bench, out, inputs, backend, params):
    return bench.prepare(out, *inputs, backend=backend, variant="student", **params)


def stage_guard(op, target, module, bench, kind, seed):
    """The output sits in the middle of a NaN buffer; the bands must stay NaN."""
    import numpy as np

    lib, params = target.lib, DEFAULT_PARAMS.get(op, {})
    rng = np.random.default_rng(seed)
    for shape in PROBE_SHAPES[kind]:
        for dtype in ("f32", "f16"):
            inputs = _inputs(target, rng, module, shape, dtype)
            out_shape = _out_shape(module, inputs, params)
            n = math.prod(out_shape)
            raw = lib.full_nan((n + 2 * GUARD,), dtype)
            out = raw[GUARD:GUARD + n].reshape(out_shape)
            _KEEP.extend((raw, *inputs))
            with _prepare(bench, out, inputs, target.backend, params) as prepared:
                prepared.run()
            lib.synchronize()
            bands = np.concatenate([lib.to_f64(raw[:GUARD]), lib.to_f64(raw[GUARD + n:])])
            changed = np.flatnonzero(~np.isnan(bands))
            if changed.size:
                first = int(changed[0])
                where = (f"{GUARD - first} elements before the output" if first < GUARD else
                         f"{first - GUARD + 1} elements after its end")
                raise Rejected("guard", f"writes outside the output: shape "
                                        f"{shape_text(op, shape)} {dtype}, "
                                        f"{changed.size} elements around it changed, the first "
                                        f"{where}")
            ok, _, message = check(module.OP, bench, lib, dtype, out, inputs, params)
            if not ok:
                raise Rejected("guard", f"wrong result on shape {shape_text(op, shape)} "
                                        f"{dtype}: {message}")


def stage_stale(op, target, module, bench, kind, seed):
    """One prepared op, the same buffers, two sets of values: both results must be right."""
    import numpy as np

    lib, params = target.lib, DEFAULT_PARAMS.get(op, {})
    rng = np.random.default_rng(seed)
    shape, dtype = PROBE_SHAPES[kind][-1], "f32"
    inputs = _inputs(target, rng, module, shape, dtype)
    out = lib.full_nan(_out_shape(module, inputs, params), dtype)
    _KEEP.extend((out, *inputs))
    with _prepare(bench, out, inputs, target.backend, params) as prepared:
        prepared.run()
        lib.synchronize()
        first = lib.to_f64(out).copy()
        ok, _, message = check(module.OP, bench, lib, dtype, out, inputs, params)
        if not ok:
            raise Rejected("stale", f"wrong result on shape {shape_text(op, shape)}: {message}")
        for x in inputs:  # new values in the same buffers
            lib.assign(x, rng.standard_normal(tuple(x.shape), dtype=np.float32) * 3 + 1)
        prepared.run()
        lib.synchronize()
        ok, _, message = check(module.OP, bench, lib, dtype, out, inputs, params)
        if not ok:
            same = np.array_equal(lib.to_f64(out), first, equal_nan=True)
            raise Rejected("stale", (
                "returns the previous call's result: the same buffers with new values gave the "
                "old output (a result remembered by buffer address?)") if same else
                f"a second run on the same buffers with new values is wrong: {message}")


def stage_cases(op, backend, dtypes=None):
    """check's whole case list on a new seed (exercise.run_check prints the details)."""
    status = exercise.run_check(op, backend, dtypes)
    if status != 0:
        raise Rejected("cases", "a correctness case failed (the first failing case is above)")


# ---- hazards: compute-sanitizer over the student's kernels --------------------------------

_REPORT = re.compile(r"^========= (?!ERROR SUMMARY)(?!\s)(.*)$")
_LOCATION = re.compile(r"\bin (\S+?):(\d+)\s*$")


def plain_hazard(tool, lines, source_dirs=()):
    """The first report of a compute-sanitizer log (its lines), in plain words with the source
    line it points at (compute-sanitizer may name the file alone: it is looked for in
    `source_dirs` too); None when there is no report."""
    first = next((i for i, line in enumerate(lines) if _REPORT.match(line)
                  and "SUMMARY" not in line  # ERROR / RACECHECK / LEAK SUMMARY lines
                  and not line.startswith("========= COMPUTE-SANITIZER")
                  and not line.startswith("========= Program hit")), None)
    if first is None:
        return None
    head = _REPORT.match(lines[first]).group(1).strip()
    where = ""
    for line in lines[first:first + 12]:
        m = _LOCATION.search(line)
        if m:
            path, number = m.group(1), int(m.group(2))
            text = ""
            for candidate in [Path(path)] + [Path(d) / Path(path).name for d in source_dirs]:
                try:
                    text = candidate.read_text().splitlines()[number - 1].strip()
                    path = str(candidate)
                    break
                except (OSError, IndexError):
                    continue
            where = f"\n    at {path}:{number}" + (f"\n        {text}" if text else "")
            break
    if "Race reported" in head or "race" in head.lower():
        words = ("a data race on shared memory: one thread reads (or writes) what another "
                 "writes, with no barrier (__syncthreads()) between them")
    elif head.startswith("Invalid __global__"):
        words = "reads or writes global memory outside the buffers it was given"
    elif head.startswith("Invalid __shared__"):
        words = "reads or writes shared memory outside the array it declared"
    elif head.startswith("Uninitialized"):
        words = "reads memory that nothing has written (an uninitialized value)"
    elif "misaligned" in head.lower():
        words = "a misaligned access (a vector load or store at an address not a multiple of its size)"
    else:
        words = head
    return f"{tool}: {words}\n    ({head}){where}"


def explain(op, args, backend):
    """After a wrong result on the GPU: racecheck over the probe cases; a race it finds is
    the verdict (it explains the wrong result), else the wrong result stands."""
    stage_hazards(op, args, backend, tools=("racecheck",))


def stage_hazards(op, args, backend, tools=SANITIZER_TOOLS):
    """The sanitizers over the probe cases, in a child process each; only kernels of the
    student's namespace are checked (the library's own are checked by its test suite)."""
    import shutil

    if backend != "nvidia":
        return ("skipped: compute-sanitizer checks GPU kernels; on the CPU the guard and stale "
                "stages stand in for memcheck, and races are not checked")
    tool_path = shutil.which("compute-sanitizer")
    if tool_path is None:
        return ("skipped: compute-sanitizer is not on PATH (it comes with the CUDA toolkit: "
                "add <cuda>/bin to PATH)")
    env = dict(os.environ, CAMP_BUILD_DIR=str(exercise.build_dir(args, backend)),
               PYTHONPATH=os.pathsep.join(str(exercise.REPO / p) for p in
                                          ("python", "tests", "scripts")))
    for tool in tools:
        extra = ["--check-api-memory-access", "no"] if tool == "initcheck" else []
        cmd = [tool_path, "--tool", tool, "--error-exitcode", "9", "--print-limit", "4",
               "--kernel-name", "kns=student_nvidia", *extra,
               sys.executable, "-m", "camp_tools.judge", "--probe", op, backend]
        t0 = time.perf_counter()
        r = subprocess.run(cmd, env=env, capture_output=True, text=True, timeout=900)
        lines = (r.stdout + r.stderr).splitlines()
        report = plain_hazard(tool, lines, [exercise.student_dir(args) / backend])
        if report:
            raise Rejected("hazards", report)
        if r.returncode != 0:
            tail = "\n".join(lines[-15:])
            raise Rejected("hazards", f"{tool}: the probe run failed (exit {r.returncode}):\n{tail}")
        print(f"camp judge: {tool}: no hazard ({time.perf_counter() - t0:.0f} s)")
    return "passed"


def run_probe(op, backend):
    """The small cases the sanitizers watch: the student kernel on every probe shape and dtype."""
    import numpy as np

    target, module, bench = _setup(op, backend)
    kind = exercise.scaffolds.OPS[op]["kind"]
    params = DEFAULT_PARAMS.get(op, {})
    rng = np.random.default_rng(0)
    for shape in PROBE_SHAPES[kind]:
        for dtype in ("f32", "f16", "bf16"):
            inputs = _inputs(target, rng, module, shape, dtype)
            # not poisoned: initcheck watches reads
            out = target.lib.empty(_out_shape(module, inputs, params), dtype)
            with _prepare(bench, out, inputs, target.backend, params) as prepared:
                prepared.run()
    target.lib.synchronize()
    return 0


# ---- timing and score -----------------------------------------------------------------------

def stage_timing(op, target, module, bench, kind, backend, dtypes, seed):
    """Times the student, the production kernel (the plan's choice) and every ladder step on
    the judge set; returns (the rows of the score table, the copy ceiling in GB/s or None for
    matmul, the ladder). Each row's "fraction" is what the score averages: of the copy
    ceiling, or for matmul of the peer's TFLOPS (the peer timed on the student's inputs)."""
    import operator_runtime as ort
    from operator_runtime_testing import cases as case_types
    from operator_runtime_testing.backends import is_not_supported
    from benchlib.bench import Workbench, measure_ceiling, run_bench

    import bench as bench_modules

    compute = kind == "matmul"
    # matmul reads each operand many times from the caches whatever the rotation, and its
    # calls are long: one buffer set, for the student and the peer alike.
    wb = Workbench(target, seed, rotate_bytes=0 if compute else None)
    ceiling_gbps = None
    if not compute:
        ceiling = measure_ceiling(wb, bench_modules.load("copy"), seed)
        ceiling_gbps = max(ceiling.ours_gbps, ceiling.peer_gbps)
    peer = target.lib.name  # numpy on the CPU, torch on a GPU
    ladder = [v for v in ort.variants(op, backend) if v not in ("auto", "student")]
    params = DEFAULT_PARAMS.get(op, {})
    rows = []
    for shape in JUDGE_SHAPES[(kind, backend)]:
        case = case_types.BenchCase("x".join(map(str, shape)), input_shapes(op, shape), params)
        for dtype in dtypes:
            row = {"shape": list(shape), "dtype": dtype, "others": {}}
            for variant in ["student", None, *ladder]:
                try:
                    r = run_bench(module.OP, bench, case, dtype, wb, seed, variant=variant,
                                  peer_names=(peer,) if compute and variant == "student" else ())
                except Exception as exc:  # noqa: BLE001
                    if variant != "student" and is_not_supported(exc):
                        continue
                    raise
                if not r.ok:
                    if variant == "student":
                        raise Rejected("timing", f"the outputs of the timed calls are wrong "
                                                 f"({case.name} {dtype}): {r.message}")
                    continue
                seconds = r.ours_s  # the dram condition (memory-bound: buffers rotated)
                if variant != "student":
                    row["others"][variant or "auto"] = seconds
                    continue
                row.update(seconds=seconds, gbps=r.nbytes / seconds / 1e9)
                if not compute:
                    row["fraction"] = row["gbps"] / ceiling_gbps
                    continue
                row.update(flops=r.flops, tflops=r.flops / seconds / 1e12)
                result, timing = r.peers.get(peer), r.peer_timing(peer)
                if timing is not None and result.ok:
                    row["peer_tflops"] = r.flops / timing.best_s / 1e12
                    row["fraction"] = row["tflops"] / row["peer_tflops"]
                else:  # the peer cannot run this dtype (numpy: no 16-bit GEMM) or was wrong
                    row["peer_why"] = (result.why or result.message) if result else "not run"
            rows.append(row)
    return rows, ceiling_gbps, ladder


def _figure(x):
    """A TFLOPS figure in 3 digits ("-": none)."""
    return "-" if x is None else f"{x:.3g}"


PEER_NAMES = {"numpy": "numpy (np.matmul: OpenBLAS)", "torch": "torch.matmul (cuBLAS)"}


def print_score(op, backend, rows, ceiling_gbps, ladder, peer="numpy"):
    """Prints the score table; returns (score or None when no row has a fraction, the ladder
    steps beaten on every case)."""
    def beats(r):
        return [v for v in ladder if v in r["others"] and r["others"][v] > r["seconds"]]

    if ceiling_gbps is None:  # matmul: TFLOPS against the peer
        how = "CUDA-graph replays" if backend == "nvidia" else "back-to-back calls"
        print(f"\ncamp judge: {op} on {backend}; peer {PEER_NAMES.get(peer, peer)} timed in this "
              f"run on the same inputs (one buffer set, {how})")
        print(f"  {'case (MxKxN)':<16} {'dtype':<5} {'student us':>11} {'TFLOPS':>8} "
              f"{'peer TFLOPS':>11} {'%peer':>6} {'auto TFLOPS':>11}  beats")
        for r in rows:
            auto = r["others"].get("auto")
            frac = f"{100 * r['fraction']:>5.1f}%" if "fraction" in r else f"{'-':>6}"
            print(f"  {'x'.join(map(str, r['shape'])):<16} {r['dtype']:<5} "
                  f"{r['seconds'] * 1e6:>11.1f} {r['tflops']:>8.3g} "
                  f"{_figure(r.get('peer_tflops')):>11} {frac} "
                  f"{_figure(r['flops'] / auto / 1e12 if auto else None):>11}  "
                  f"{', '.join(beats(r)) or '-'}")
        for r in rows:
            if "peer_why" in r:
                print(f"  (no %peer for {r['dtype']}: {r['peer_why']})")
        what = f"of {peer}'s TFLOPS"
    else:
        print(f"\ncamp judge: {op} on {backend}; copy ceiling {ceiling_gbps:.1f} GB/s measured in "
              f"this run (time: the benchmark's, buffers rotated through 4x the last-level cache)")
        print(f"  {'case':<14} {'dtype':<5} {'student us':>11} {'GB/s':>8} {'%ceil':>6} "
              f"{'auto us':>9}  beats")
        for r in rows:
            auto = r["others"].get("auto")
            print(f"  {'x'.join(map(str, r['shape'])):<14} {r['dtype']:<5} "
                  f"{r['seconds'] * 1e6:>11.1f} {r['gbps']:>8.1f} {100 * r['fraction']:>5.0f}% "
                  f"{(auto or math.nan) * 1e6:>9.1f}  {', '.join(beats(r)) or '-'}")
        what = "of the copy ceiling"
    steps = [v for v in ladder if all(v in beats(r) for r in rows)]
    some = [v for v in ladder if v not in steps and any(v in beats(r) for r in rows)]
    faster = (f"faster than {', '.join(steps)} on every case" if steps
              else "no ladder step beaten on every case")
    if some:
        faster += f" ({', '.join(some)} on some cases: the beats column)"
    scored = [r["fraction"] for r in rows if "fraction" in r]
    if not scored:
        print(f"no score: no case has a peer time to compare with (time f32: --dtype f32); "
              f"{faster}")
        return None, steps
    score = math.exp(sum(math.log(max(f, 1e-9)) for f in scored) / len(scored))
    print(f"score: {100 * score:.1f}% {what} (geometric mean over the judge set); {faster}")
    return score, steps


def leaderboard_path(args):
    return exercise.student_dir(args) / f"leaderboard-{socket.gethostname()}.json"


def record(args, op, backend, score, rows, steps):
    """Keeps the best score per op and backend; returns (best entry, improved)."""
    path = leaderboard_path(args)
    try:
        board = json.loads(path.read_text())
    except (OSError, ValueError):
        board = {}
    key = f"{op}/{backend}"
    keys = ("shape", "dtype", "seconds", "gbps", "tflops", "peer_tflops")
    entry = {"score": score, "beats": steps, "when": time.strftime("%Y-%m-%d %H:%M"),
             "cases": [{k: r[k] for k in keys if k in r} for r in rows]}
    best = board.get(key)
    improved = best is None or score > best["score"]
    if improved:
        board[key] = best = entry
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(json.dumps(board, indent=1) + "\n")
    return best, improved


# ---- the command ----------------------------------------------------------------------------

def cmd_judge(args):
    backend, status = exercise.build_student(args, "judge")
    if backend is None:
        return status
    import operator_runtime as ort

    target, module, bench = _setup(args.op, backend)
    if "student" not in ort.variants(args.op, backend):
        print(f"camp judge: {ort.library_path()} has no student variant of {args.op} on "
              f"{backend}", file=sys.stderr)
        return 2
    kind = exercise.scaffolds.OPS[args.op]["kind"]
    seed = random.SystemRandom().randrange(2**31)
    print(f"camp judge: {args.op} variant 'student' on {backend} ({ort.library_path()}), "
          f"seed {seed}")
    try:
        for name, stage in (("guard", lambda: stage_guard(args.op, target, module, bench, kind, seed)),
                            ("stale", lambda: stage_stale(args.op, target, module, bench, kind, seed)),
                            ("hazards", lambda: stage_hazards(args.op, args, backend)),
                            ("cases", lambda: stage_cases(args.op, backend))):
            try:
                print(f"camp judge: {name}: {stage() or 'passed'}")
            except Rejected as verdict:
                if backend == "nvidia" and name != "hazards":
                    explain(args.op, args, backend)  # a race often is why a result is wrong
                raise verdict
        if args.no_timing:
            print("ACCEPTED (correctness only: --no-timing)")
            return 0
        dtypes = [d for d in (args.dtype or default_dtypes(args.op, backend)).split(",") if d]
        rows, ceiling_gbps, ladder = stage_timing(args.op, target, module, bench, kind, backend,
                                                  dtypes, seed)
    except Rejected as verdict:
        print(f"REJECTED at {verdict.stage}: {verdict.reason}")
        return 1
    score, steps = print_score(args.op, backend, rows, ceiling_gbps, ladder, target.lib.name)
    if score is None:
        print("ACCEPTED (no score: nothing to compare with)")
        return 0
    best, improved = record(args, args.op, backend, score, rows, steps)
    print("ACCEPTED; " + ("a new best, " if improved else
                          f"your best stays {100 * best['score']:.1f}% ({best['when']}), ")
          + f"kept in {leaderboard_path(args)}")
    return 0


if __name__ == "__main__":  # the probe run the sanitizers watch: python -m camp_tools.judge --probe OP BACKEND
    if len(sys.argv) == 4 and sys.argv[1] == "--probe":
        sys.exit(run_probe(sys.argv[2], sys.argv[3]))
    sys.exit("usage: python -m camp_tools.judge --probe OP BACKEND (camp.py judge runs it)")
