"""camp.py exercise | check | reset: the "student" variant of an operator.

exercise OP  writes <student dir>/<backend>/OP_student.{cc,cu} from a scaffold
             (scaffolds.py) and builds the library with it: the variant list of
             OP on that backend gains "student" (operator_runtime.variants).
check OP     builds, then runs OP's correctness cases (tests/cases/OP.py, every
             dtype) on variant "student"; prints PASS, or FAIL with the first
             wrong element (index, expected, got). Exit status 0 only on PASS.
reset OP     removes the file and rebuilds (the variant disappears).

The student dir defaults to <repo>/student (git-ignored; CMake's CAMP_STUDENT_DIR);
the build dir to <repo>/build-cpu or <repo>/build-nvidia. --student-dir and
--build-dir move both (the project's own test uses a temporary student dir).
"""

import os
import re
import subprocess
import sys
from pathlib import Path

from . import scaffolds

REPO = Path(__file__).resolve().parents[2]
SUFFIX = {"cpu": ".cc", "nvidia": ".cu"}


def register(sub):
    for name, func, text in (
            ("exercise", cmd_exercise, "create the student variant of OP from a scaffold and build it"),
            ("check", cmd_check, "build, then run OP's correctness cases on the student variant"),
            ("reset", cmd_reset, "remove the student variant of OP and rebuild")):
        p = sub.add_parser(name, help=text, description=text)
        p.add_argument("op", choices=sorted(scaffolds.OPS))
        p.add_argument("--backend", default="nvidia" if name != "check" else None,
                       choices=("cpu", "nvidia"),
                       help="the backend of the variant (exercise/reset default: nvidia; check: "
                            "the one whose student file exists, nvidia first)")
        p.add_argument("--student-dir", type=Path, default=None,
                       help="where student/<backend>/ files go (default: <repo>/student)")
        p.add_argument("--build-dir", type=Path, default=None,
                       help="the build folder (default: <repo>/build-<backend>)")
        if name == "exercise":
            p.add_argument("--force", action="store_true", help="overwrite an existing exercise")
        if name != "check":
            p.add_argument("--no-build", action="store_true", help="write/remove the file only")
        else:
            p.add_argument("--dtype", default=None, help="comma-separated dtypes (default: all)")
        p.set_defaults(func=func)


def student_dir(args):
    return (args.student_dir or REPO / "student").resolve()


def student_file(args, backend):
    return student_dir(args) / backend / f"{args.op}_student{SUFFIX[backend]}"


def build_dir(args, backend):
    return (args.build_dir or REPO / f"build-{backend}").resolve()


def build(args, backend):
    """Configures (when needed) and compiles libcamp_ops.so with the student dir in effect."""
    bdir, sdir = build_dir(args, backend), student_dir(args)
    env = dict(os.environ, BUILD_DIR=str(bdir))
    cache = bdir / "CMakeCache.txt"
    if not cache.is_file():
        script = REPO / "scripts" / f"build_{backend}.sh"
        print(f"camp: configuring {bdir} ({script.name} configure)", flush=True)
        subprocess.run(["bash", str(script), "configure"], env=env, check=True)
    match = re.search(r"^CAMP_STUDENT_DIR:PATH=(.*)$", cache.read_text(), re.M)
    if not match or Path(match.group(1)).resolve() != sdir:
        subprocess.run(["cmake", "-S", str(REPO), "-B", str(bdir), f"-DCAMP_STUDENT_DIR={sdir}"],
                       check=True, stdout=subprocess.DEVNULL)
    jobs = os.environ.get("JOBS", str(os.cpu_count() or 2))
    print(f"camp: building {bdir}/libcamp_ops.so", flush=True)
    r = subprocess.run(["cmake", "--build", str(bdir), "--target", "camp_ops", "-j", jobs])
    if r.returncode != 0:
        print(f"camp: the build failed (compiler errors above; the exercise file is "
              f"{student_file(args, backend)})", file=sys.stderr)
    return r.returncode


def cmd_exercise(args):
    path = student_file(args, args.backend)
    if path.exists() and not args.force:
        print(f"camp: {path} exists (your work); --force overwrites it, `camp.py reset "
              f"{args.op} --backend {args.backend}` removes it", file=sys.stderr)
        return 1
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(scaffolds.render(args.op, args.backend))
    print(f"camp: wrote {path}")
    if args.no_build:
        return 0
    status = build(args, args.backend)
    if status == 0:
        print(f"\nNext: write the kernel body between the TODO marks in\n  {path}\nthen run\n"
              f"  python scripts/camp.py check {args.op} --backend {args.backend}")
    return status


def cmd_reset(args):
    path = student_file(args, args.backend)
    if not path.exists():
        print(f"camp: no exercise at {path}")
        return 0
    path.unlink()
    print(f"camp: removed {path}")
    return 0 if args.no_build else build(args, args.backend)


def cmd_check(args):
    backend = args.backend or next(
        (b for b in ("nvidia", "cpu") if student_file(args, b).exists()), None)
    if backend is None or not student_file(args, backend).exists():
        print(f"camp: no exercise for {args.op}"
              f"{'' if backend is None else ' on ' + backend}: run `python scripts/camp.py exercise "
              f"{args.op} --backend {backend or 'nvidia'}` first", file=sys.stderr)
        return 2
    status = build(args, backend)
    if status:
        return status
    os.environ["CAMP_BUILD_DIR"] = str(build_dir(args, backend))
    for p in (REPO / "python", REPO / "tests"):
        sys.path.insert(0, str(p))
    return run_check(args.op, backend, args.dtype)


def run_check(op, backend, dtypes=None):
    import random

    import operator_runtime as ort
    import cases as case_modules
    from operator_runtime_testing import DTYPES, backends, run_case
    from operator_runtime_testing.backends import is_not_supported
    from operator_runtime_testing.cases import case_seed

    target = backends.select(backend)
    if target.skip_reason:
        print(f"camp check: cannot run on {backend}: {target.skip_reason}", file=sys.stderr)
        return 2
    if "student" not in ort.variants(op, backend):
        print(f"camp check: {ort.library_path()} has no student variant of {op} on {backend} "
              f"(has: {', '.join(ort.variants(op, backend))})", file=sys.stderr)
        return 2
    module = case_modules.load(op)
    seed = random.SystemRandom().randrange(2**31)
    dtypes = [d for d in (dtypes or ",".join(DTYPES)).split(",") if d]
    print(f"camp check: {op} variant 'student' on {backend} ({ort.library_path()}), seed {seed}")
    passed = skipped = failed = 0
    first = None
    for c in module.CASES:
        for dtype in dtypes:
            s = case_seed(seed, op, c.name, dtype)
            try:
                r = run_case(module.OP, c, dtype, target.lib, target.backend, s,
                             torch_check=False, variant="student")
                ok, detail = r.ok, r.message
            except Exception as exc:  # noqa: BLE001 (a crash fails the case)
                if is_not_supported(exc):
                    skipped += 1
                    continue
                ok, detail = False, f"{type(exc).__name__}: {exc}"
            if ok:
                passed += 1
                continue
            failed += 1
            if failed <= 5:
                print(f"  FAIL {c.name} [{dtype}]: {detail}")
            first = first or (c, dtype, detail)
    if first is None and passed == 0:
        print("FAIL: the student variant declined every case (its plan returns NOT_SUPPORTED)")
        return 1
    note = f" ({skipped} cases of other layouts skipped: the exercise declines them)" if skipped else ""
    if first is None:
        print(f"PASS: {passed} cases{note}")
        return 0
    if failed > 5:
        print(f"  ... and {failed - 5} more failing cases")
    c, dtype, detail = first
    inputs = ", ".join(f"{tuple(x.shape)} {x.layout}" for x in c.inputs)
    print(f"FAIL: first failing case {c.name} [{dtype}], inputs {inputs}, params {c.params}:\n"
          f"  {detail}\n  ({failed} failed, {passed} passed{note})")
    return 1
