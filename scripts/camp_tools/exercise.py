"""camp.py exercise | check | reset: the "student" variant of an operator.

exercise OP  writes <student dir>/<backend>/OP_student.{cc,cu} from a scaffold
             (scaffolds.py) and builds the library with it: the variant list of
             OP on that backend gains "student" (operator_runtime.variants).
check OP     builds, then runs OP's correctness cases (tests/cases/OP.py, every
             dtype) on variant "student"; prints PASS, or FAIL with the first
             wrong element (index, expected, got); on NVIDIA, then compute-sanitizer
             (memcheck, racecheck, initcheck) over the student's kernels on small
             cases (judge.py). Exit status 0 only on PASS.
reset OP     removes the file and rebuilds (the variant disappears).

Which backend: --backend, else for exercise the one this machine can run (nvidia when
nvcc exists and a GPU is visible, else cpu), for check and reset the one with an exercise
file. Which library: the one Python loads in this checkout (operator_runtime's own search:
$CAMP_BUILD_DIR, else the first of build-nvidia, build-metax, build-cpu that holds
libcamp_ops.so), so that run_ops.py, pytest and `import operator_runtime` see the student
variant; a CPU exercise is compiled into any of them (every build has the CPU backend). An
NVIDIA exercise needs an NVIDIA build: build-nvidia (made when missing). With no library
yet: build-<backend>. The student dir defaults to <repo>/student (git-ignored; CMake's
CAMP_STUDENT_DIR). --student-dir and --build-dir override both (the project's own test
uses a temporary student dir).
"""

import os
import re
import shutil
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
        p.add_argument("--backend", default=None, choices=("cpu", "nvidia"),
                       help="the backend of the variant (default for exercise: nvidia when nvcc "
                            "and a GPU are here, else cpu; for check and reset: the one with an "
                            "exercise file)")
        p.add_argument("--student-dir", type=Path, default=None,
                       help="where student/<backend>/ files go (default: <repo>/student)")
        p.add_argument("--build-dir", type=Path, default=None,
                       help="the build folder (default: the one whose library Python loads: "
                            "$CAMP_BUILD_DIR, else the first built of build-nvidia, build-metax, "
                            "build-cpu; else build-<backend>)")
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


def machine_backend():
    """nvidia when nvcc exists and a GPU is visible (as scripts/quickstart.sh decides), else cpu."""
    if shutil.which("nvcc") and shutil.which("nvidia-smi"):
        r = subprocess.run(["nvidia-smi", "-L"], capture_output=True, text=True)
        if r.returncode == 0 and "GPU" in r.stdout:
            return "nvidia"
    return "cpu"


def loaded_library():
    """The libcamp_ops.so that `import operator_runtime` loads in this checkout (None: none yet)."""
    if str(REPO / "python") not in sys.path:
        sys.path.insert(0, str(REPO / "python"))
    from operator_runtime import _lib

    return next((p for p in _lib._search_paths(None) if p.is_file()), None)


def has_nvidia(bdir):
    cache = bdir / "CMakeCache.txt"
    return cache.is_file() and re.search(r"^CAMP_ENABLE_NVIDIA:BOOL=ON$", cache.read_text(), re.M)


def build_dir(args, backend):
    """The build folder of the library Python loads (see the module's docstring)."""
    if args.build_dir:
        return args.build_dir.resolve()
    lib = loaded_library()
    if lib is not None and (lib.parent / "CMakeCache.txt").is_file():
        if backend == "cpu" or has_nvidia(lib.parent):
            return lib.parent.resolve()
    if os.environ.get("CAMP_BUILD_DIR"):
        return Path(os.environ["CAMP_BUILD_DIR"]).expanduser().resolve()
    return (REPO / f"build-{backend}").resolve()


def check_build_dir(args, backend, bdir):
    """None when Python will load bdir's library and it can hold `backend`; else the reason."""
    lib = loaded_library()
    env = os.environ.get("CAMP_BUILD_DIR")
    if (bdir / "libcamp_ops.so").is_file() and not (bdir / "CMakeCache.txt").is_file():
        return (f"{bdir} holds a libcamp_ops.so but is no CMake build folder (an installed "
                f"library?); point CAMP_BUILD_DIR (or --build-dir) at a build folder, e.g. "
                f"{REPO / 'build-cpu'}")
    if backend == "nvidia" and (bdir / "CMakeCache.txt").is_file() and not has_nvidia(bdir):
        return (f"{bdir} is a build without the NVIDIA backend; an NVIDIA exercise needs an "
                f"NVIDIA build: unset CAMP_BUILD_DIR (then build-nvidia is used), or use "
                f"--backend cpu")
    ours = [(REPO / d).resolve() for d in ("build-nvidia", "build-metax", "build-cpu")]
    if args.build_dir is None and env is None and lib is not None and lib.parent.resolve() not in ours:
        return (f"Python loads {lib}, which is no build folder of this checkout (an installed "
                f"package?); `pip uninstall operator-runtime`, or set CAMP_BUILD_DIR to the "
                f"build folder to use, or pass --build-dir")
    return None


def build(args, backend):
    """Configures (when needed) and compiles libcamp_ops.so with the student dir in effect."""
    bdir, sdir = build_dir(args, backend), student_dir(args)
    problem = check_build_dir(args, backend, bdir)
    if problem:
        print(f"camp: {problem}", file=sys.stderr)
        return 2
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
    print(f"camp: building {bdir}/libcamp_ops.so (the library Python loads in this checkout)",
          flush=True)
    r = subprocess.run(["cmake", "--build", str(bdir), "--target", "camp_ops", "-j", jobs])
    if r.returncode != 0:
        print(f"camp: the build failed (compiler errors above; the exercise file is "
              f"{student_file(args, backend)}); fix it, then run `python3 scripts/camp.py check "
              f"{args.op}`", file=sys.stderr)
    return r.returncode


def cmd_exercise(args):
    if args.backend is None:
        args.backend = machine_backend()
        print(f"camp: backend {args.backend} (what this machine runs; --backend cpu|nvidia "
              f"chooses)")
    path = student_file(args, args.backend)
    if path.exists() and not args.force:
        print(f"camp: {path} exists (your work); `python3 scripts/camp.py check {args.op}` "
              f"tests it, --force overwrites it, `python3 scripts/camp.py reset {args.op}` "
              f"removes it", file=sys.stderr)
        return 1
    if args.backend == "nvidia" and machine_backend() != "nvidia":
        print(f"camp: no usable GPU here (or no nvcc): the NVIDIA exercise compiles into "
              f"build-nvidia/ but `check` and `judge` cannot run it, and from now on every "
              f"command of this checkout loads build-nvidia/ (CPU exercises run there too). "
              f"A kernel that runs here: --backend cpu", file=sys.stderr)
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(scaffolds.render(args.op, args.backend))
    print(f"camp: wrote {path}")
    if args.no_build:
        return 0
    status = build(args, args.backend)
    if status == 0:
        print(f"\nNext: write the kernel body between the TODO marks in\n  {path}\nthen run\n"
              f"  python3 scripts/camp.py check {args.op}")
    return status


def exercise_backend(args):
    """--backend, else the backend with an exercise file of the op (both: this machine's)."""
    if args.backend:
        return args.backend
    found = [b for b in ("cpu", "nvidia") if student_file(args, b).exists()]
    if len(found) == 2:
        return machine_backend()
    return found[0] if found else None


def stale_build_dirs(args, bdir):
    """Other build folders of this checkout that compiled this student dir in (reset rebuilds
    them too, so no library keeps a removed variant)."""
    sdir, found = student_dir(args), []
    for d in (REPO / n for n in ("build-nvidia", "build-metax", "build-cpu")):
        cache = d / "CMakeCache.txt"
        if d.resolve() == bdir or not (d / "libcamp_ops.so").is_file() or not cache.is_file():
            continue
        m = re.search(r"^CAMP_STUDENT_DIR:PATH=(.*)$", cache.read_text(), re.M)
        if m and Path(m.group(1)).resolve() == sdir:
            found.append(d.resolve())
    return found


def cmd_reset(args):
    backend = exercise_backend(args)
    path = student_file(args, backend or "cpu")
    if backend is None or not path.exists():
        print(f"camp: no exercise of {args.op} to remove (looked for {path})")
        return 0
    path.unlink()
    print(f"camp: removed {path}")
    for other in SUFFIX:
        if other != backend and student_file(args, other).exists():
            print(f"camp: {student_file(args, other)} stays (`python3 scripts/camp.py reset {args.op} "
                  f"--backend {other}` removes it)")
    if args.no_build:
        return 0
    status = build(args, backend)
    if status == 0 and args.build_dir is None:
        for d in stale_build_dirs(args, build_dir(args, backend)):
            print(f"camp: rebuilding {d} too (it compiles the student folder in)", flush=True)
            status = status or subprocess.run(
                ["cmake", "--build", str(d), "--target", "camp_ops", "-j",
                 os.environ.get("JOBS", str(os.cpu_count() or 2))]).returncode
    return status


def build_student(args, command):
    """For check and judge: the exercise's backend, its library built with the student file
    and made the one this process loads. Returns (backend, 0), or (None, exit status) after
    saying what to type next."""
    backend = exercise_backend(args)
    if backend is None or not student_file(args, backend).exists():
        print(f"camp: no exercise of {args.op}"
              f"{'' if backend is None else ' on ' + backend}: run `python3 scripts/camp.py "
              f"exercise {args.op}{'' if backend is None else ' --backend ' + backend}` first",
              file=sys.stderr)
        return None, 2
    if backend == "nvidia" and machine_backend() != "nvidia":
        on_cpu = command if student_file(args, "cpu").exists() else "exercise"  # the next step there
        print(f"camp {command}: {args.op} has an NVIDIA exercise, but this machine has no usable "
              f"GPU (or no nvcc): it compiles, it cannot run here. On the CPU: "
              f"`python3 scripts/camp.py {on_cpu} {args.op} --backend cpu`", file=sys.stderr)
        return None, 2
    status = build(args, backend)
    if status:
        return None, status
    os.environ["CAMP_BUILD_DIR"] = str(build_dir(args, backend))
    for p in (REPO / "python", REPO / "tests"):
        sys.path.insert(0, str(p))
    return backend, 0


def cmd_check(args):
    backend, status = build_student(args, "check")
    if backend is None:
        return status
    status = run_check(args.op, backend, args.dtype)
    if status != 0 or backend != "nvidia":
        return status
    # On a GPU, the cases passing is not enough: compute-sanitizer looks for races, stray
    # accesses and uninitialized reads in the student's kernels (camp.py judge does the same).
    from . import judge

    try:
        print(f"camp check: hazards: {judge.stage_hazards(args.op, args, backend)}")
    except judge.Rejected as verdict:
        print(f"FAIL: {verdict.reason}")
        return 1
    return 0


def run_check(op, backend, dtypes=None):
    import random

    import operator_runtime as ort
    import cases as case_modules
    from operator_runtime_testing import DTYPES, backends, run_case
    from operator_runtime_testing.backends import is_not_supported
    from operator_runtime_testing.cases import case_seed

    target = backends.select(backend)
    if target.skip_reason:
        hint = (f"; on the CPU: `python3 scripts/camp.py exercise {op} --backend cpu`"
                if backend != "cpu" else "")
        print(f"camp check: cannot run on {backend}: {target.skip_reason}{hint}", file=sys.stderr)
        return 2
    if "student" not in ort.variants(op, backend):
        print(f"camp check: {ort.library_path()} has no student variant of {op} on {backend} "
              f"(has: {', '.join(ort.variants(op, backend))}): the build did not compile the "
              f"exercise in; reconfigure with `cmake -S . -B {Path(ort.library_path()).parent}`, "
              f"then `python3 scripts/camp.py check {op}` again", file=sys.stderr)
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
