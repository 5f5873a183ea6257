"""The exercise flow of scripts/camp.py, run as a learner would on the CPU backend:
exercise -> the TODO scaffold builds, and check fails naming the first wrong element ->
a correct body (written by this test) passes check -> reset removes the variant.

It builds into <repo>/build-camp-test (kept between runs, so only the exercise file and
the link are redone) with a temporary student dir, never touching <repo>/student or the
other build folders. The NVIDIA scaffolds are compiled (not run) when nvcc is present.
"""

import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]
BUILD = REPO / "build-camp-test"
sys.path.insert(0, str(REPO / "scripts"))

from camp_tools import scaffolds  # noqa: E402

pytestmark = pytest.mark.skipif(shutil.which("cmake") is None, reason="cmake is not installed")


# The CPU variant lists without an exercise: softmax's and matmul's ladders
# (ops/<op>/cpu/ladder.cc), the plan's choice alone for the elementwise operators.
LADDERS = {"softmax": ["three_pass", "online", "vectorized", "auto"], "vector_add": ["auto"],
           "matmul": ["naive", "ikj", "packed", "auto"]}

# A correct body made wrong by one off-by-one store: (text of the correct body, replacement).
OFF_BY_ONE = {
    "softmax": ("out[oo + k]", "out[oo + k - (k > 0)]"),
    "vector_add": ("out[i] =", "out[i > 2 ? i - 1 : i] ="),
    "matmul": ("c[i * g.c_row + j * g.c_col]", "c[i * g.c_row + (j > 2 ? j - 1 : j) * g.c_col]"),
}


def camp(command, op, student_dir, *extra):
    r = subprocess.run([sys.executable, str(REPO / "scripts" / "camp.py"), command, op,
                        "--backend", "cpu", "--student-dir", str(student_dir),
                        "--build-dir", str(BUILD), *extra],
                       capture_output=True, text=True, timeout=1200)
    return r.returncode, r.stdout + r.stderr


def listed_variants(op):
    code = f"import operator_runtime as ort; print(' '.join(ort.variants({op!r}, 'cpu')))"
    env = dict(os.environ, CAMP_BUILD_DIR=str(BUILD), PYTHONPATH=str(REPO / "python"))
    r = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True,
                       check=True)
    return r.stdout.split()


@pytest.mark.parametrize("op", ["softmax", "vector_add", "matmul"])
def test_exercise_check_reset(op, tmp_path):
    student = tmp_path / "student"
    path = student / "cpu" / f"{op}_student.cc"

    code, out = camp("exercise", op, student)
    assert code == 0, out
    assert path.is_file()
    assert scaffolds.BEGIN in path.read_text()
    ladder = LADDERS[op]
    assert listed_variants(op) == ["student", *ladder]
    # A second exercise keeps the learner's file.
    code, out = camp("exercise", op, student, "--no-build")
    assert code == 1 and "exists" in out, out

    # The TODO body writes nothing: the NaN-poisoned output is reported at its first element.
    code, out = camp("check", op, student)
    assert code == 1, out
    assert re.search(r"FAIL: first failing case \S+ \[\w+\], inputs .*\n\s+op_?: NaN mismatch at "
                     r"\([\d, ]*\): got nan, expected -?[\d.]", out), out

    path.write_text(scaffolds.replace_body(path.read_text(), scaffolds.correct_body(op, "cpu")))
    code, out = camp("check", op, student)
    assert code == 0, out
    assert re.search(r"^PASS: \d+ cases", out, re.M), out

    # A wrong body is caught too (not only an empty one): off by one element.
    good, bad = OFF_BY_ONE[op]
    assert good in scaffolds.correct_body(op, "cpu")
    wrong = scaffolds.correct_body(op, "cpu").replace(good, bad)
    path.write_text(scaffolds.replace_body(path.read_text(), wrong))
    code, out = camp("check", op, student)
    assert code == 1 and "first failing case" in out, out

    code, out = camp("reset", op, student)
    assert code == 0, out
    assert not path.exists()
    assert listed_variants(op) == ladder


@pytest.mark.skipif(shutil.which("nvcc") is None, reason="nvcc is not installed")
@pytest.mark.parametrize("op, body", [("relu", "correct"), ("softmax", "correct"),
                                      ("reduce_sum", "todo"), ("matmul", "correct"),
                                      ("matmul", "todo")])
def test_nvidia_scaffold_compiles(op, body, tmp_path):
    text = scaffolds.render(op, "nvidia")
    if body == "correct":
        text = scaffolds.replace_body(text, scaffolds.correct_body(op, "nvidia"))
    src = tmp_path / f"{op}_student.cu"
    src.write_text(text)
    r = subprocess.run(["nvcc", "-x", "cu", "-std=c++17", "-arch=sm_90", "-c", str(src), "-o",
                        str(tmp_path / "student.o"), f"-I{REPO / 'include'}", f"-I{REPO}",
                        "--expt-relaxed-constexpr", "-Xcompiler=-Wall,-Wextra,-Werror"],
                       capture_output=True, text=True, timeout=600)
    assert r.returncode == 0, r.stdout + r.stderr


def fake_build(path, nvidia):
    path.mkdir(parents=True)
    (path / "libcamp_ops.so").write_text("")
    (path / "CMakeCache.txt").write_text(f"CAMP_ENABLE_NVIDIA:BOOL={'ON' if nvidia else 'OFF'}\n")
    return path / "libcamp_ops.so"


def test_the_exercise_builds_the_library_python_loads(tmp_path, monkeypatch):
    from argparse import Namespace

    from camp_tools import exercise

    monkeypatch.delenv("CAMP_BUILD_DIR", raising=False)
    monkeypatch.setattr(exercise, "REPO", tmp_path)
    args = Namespace(build_dir=None, student_dir=None, op="softmax", backend=None)
    # No library yet: build-<backend>.
    monkeypatch.setattr(exercise, "loaded_library", lambda: None)
    assert exercise.build_dir(args, "cpu") == tmp_path / "build-cpu"
    assert exercise.build_dir(args, "nvidia") == tmp_path / "build-nvidia"
    # Python loads build-nvidia: a CPU exercise goes there too, not into build-cpu.
    cpu, nvidia = fake_build(tmp_path / "build-cpu", False), fake_build(tmp_path / "build-nvidia", True)
    monkeypatch.setattr(exercise, "loaded_library", lambda: nvidia)
    assert exercise.build_dir(args, "cpu") == tmp_path / "build-nvidia"
    assert exercise.check_build_dir(args, "cpu", tmp_path / "build-nvidia") is None
    # Python loads a CPU-only build: an NVIDIA exercise makes build-nvidia (loaded first then).
    monkeypatch.setattr(exercise, "loaded_library", lambda: cpu)
    assert exercise.build_dir(args, "cpu") == tmp_path / "build-cpu"
    assert exercise.build_dir(args, "nvidia") == tmp_path / "build-nvidia"
    assert exercise.check_build_dir(args, "nvidia", tmp_path / "build-nvidia") is None
    # Python loads an installed library: building here would change nothing it sees.
    installed = fake_build(tmp_path / "site" / "operator_runtime", False)
    (installed.parent / "CMakeCache.txt").unlink()
    monkeypatch.setattr(exercise, "loaded_library", lambda: installed)
    why = exercise.check_build_dir(args, "cpu", exercise.build_dir(args, "cpu"))
    assert "pip uninstall" in why, why
    monkeypatch.setattr(exercise, "loaded_library", lambda: cpu)
    # CAMP_BUILD_DIR naming a CPU-only build: an NVIDIA exercise is refused with the way out.
    monkeypatch.setenv("CAMP_BUILD_DIR", str(tmp_path / "build-cpu"))
    why = exercise.check_build_dir(args, "nvidia", exercise.build_dir(args, "nvidia"))
    assert "without the NVIDIA backend" in why and "--backend cpu" in why, why
    # reset also rebuilds the other builds that compiled this student dir in.
    student = (tmp_path / "student").resolve()
    with open(tmp_path / "build-cpu" / "CMakeCache.txt", "a") as f:
        f.write(f"CAMP_STUDENT_DIR:PATH={student}\n")
    assert exercise.stale_build_dirs(args, (tmp_path / "build-nvidia").resolve()) == [
        (tmp_path / "build-cpu").resolve()]


def test_without_gpu_tools_the_machine_backend_is_cpu(monkeypatch):
    from camp_tools import exercise

    monkeypatch.setattr(exercise.shutil, "which", lambda name: None)
    assert exercise.machine_backend() == "cpu"
