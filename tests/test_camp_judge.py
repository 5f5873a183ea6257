"""The judge (`camp.py judge`) judged: a correct exercise is accepted and scored, and every
known-wrong solution (scripts/camp_tools/wrong_solutions.py) is rejected with its reason.

CPU always (the sanitizer stage is skipped there, with the reason printed); NVIDIA where a
GPU is visible to torch and nvcc is on PATH (there compute-sanitizer must catch the racy
reduction). Builds go to <repo>/build-camp-test (CPU, shared with test_camp_exercise.py)
and <repo>/build-camp-test-nvidia, with a temporary student dir.
"""

import json
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]
BUILDS = {"cpu": REPO / "build-camp-test", "nvidia": REPO / "build-camp-test-nvidia"}
sys.path.insert(0, str(REPO / "scripts"))

from camp_tools import judge as judge_module  # noqa: E402
from camp_tools import scaffolds, wrong_solutions  # noqa: E402


def _gpu_reason():
    if shutil.which("nvcc") is None:
        return "nvcc is not on PATH (the NVIDIA variant cannot be built)"
    try:
        import torch
    except ImportError:
        return "torch is not installed (the GPU judge allocates with torch)"
    return None if torch.cuda.is_available() else "torch sees no GPU"


def backends():
    params = [pytest.param("cpu", marks=pytest.mark.skipif(
        shutil.which("cmake") is None, reason="cmake is not installed"))]
    reason = _gpu_reason()
    params.append(pytest.param("nvidia", marks=pytest.mark.skipif(reason is not None,
                                                                  reason=reason or "")))
    return params


def judge(backend, student, *extra, op="reduce_sum"):
    r = subprocess.run([sys.executable, str(REPO / "scripts" / "camp.py"), "judge", op,
                        "--backend", backend, "--student-dir", str(student),
                        "--build-dir", str(BUILDS[backend]), *extra],
                       capture_output=True, text=True, timeout=1800)
    return r.returncode, r.stdout + r.stderr


def write(student, backend, text, op="reduce_sum"):
    path = student / backend / f"{op}_student{'.cc' if backend == 'cpu' else '.cu'}"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)
    return path


def test_hazard_reports_in_plain_words(tmp_path):
    """compute-sanitizer's report -> the reason the judge prints (no GPU needed): the first
    report with the student's source line (found by file name); summaries are no report."""
    source = tmp_path / "nvidia" / "reduce_sum_student.cu"
    source.parent.mkdir()
    source.write_text("a\nb\n    partial[threadIdx.x] = s;\n")
    log = ["========= COMPUTE-SANITIZER",
           "========= Error: Race reported between Write access at void oprt::reduce_sum::"
           "student_nvidia::student_kernel<float>(...)+0x15b0 in reduce_sum_student.cu:3",
           "=========     and Read access at ... in reduce_sum_student.cu:9 [128 hazards]",
           "========= RACECHECK SUMMARY: 1 hazard displayed (1 error, 0 warnings)"]
    report = judge_module.plain_hazard("racecheck", log, [source.parent])
    assert report.startswith("racecheck: a data race on shared memory"), report
    assert f"at {source}:3\n        partial[threadIdx.x] = s;" in report, report
    clean = ["========= COMPUTE-SANITIZER",
             "========= RACECHECK SUMMARY: 0 hazards displayed (0 errors, 0 warnings)",
             "========= ERROR SUMMARY: 0 errors"]
    assert judge_module.plain_hazard("racecheck", clean) is None
    oob = ["========= Invalid __global__ write of size 4 bytes",
           "=========     at void student_kernel<float>(...)+0x70 in /x/reduce_sum_student.cu:3"]
    assert "outside the buffers it was given" in judge_module.plain_hazard("memcheck", oob, [source.parent])


def solutions():
    """reduce_sum on every backend; on NVIDIA every op (each is built and timed: minutes on the
    CPU machine, where one op shows the flow)."""
    params = [pytest.param(backend_param.values[0], "reduce_sum", marks=backend_param.marks,
                           id=f"{backend_param.values[0]}-reduce_sum")
              for backend_param in backends()]
    nvidia = params[-1]
    params += [pytest.param("nvidia", op, marks=nvidia.marks, id=f"nvidia-{op}")
               for op in scaffolds.OPS if op != "reduce_sum"]
    return params


@pytest.mark.parametrize("backend,op", solutions())
def test_judge_accepts_and_scores_a_correct_solution(backend, op, tmp_path):
    student = tmp_path / "student"
    body = scaffolds.correct_body(op, backend)
    write(student, backend, scaffolds.replace_body(scaffolds.render(op, backend), body), op)
    code, out = judge(backend, student, "--dtype", "f32", op=op)
    assert code == 0, out
    for stage in ("guard", "stale", "cases"):
        assert f"camp judge: {stage}: passed" in out, out
    if backend == "cpu":
        assert "camp judge: hazards: skipped: compute-sanitizer checks GPU kernels" in out, out
    else:
        assert "camp judge: hazards: passed" in out, out
        for tool in ("memcheck", "racecheck", "initcheck"):
            assert f"camp judge: {tool}: no hazard" in out, out
    m = re.search(r"^score: ([\d.]+)% of the copy ceiling", out, re.M)
    assert m and float(m.group(1)) > 0, out
    assert "ACCEPTED; a new best" in out, out
    board = json.loads(next(student.glob("leaderboard-*.json")).read_text())
    assert board[f"{op}/{backend}"]["score"] > 0
    print(out[out.index("camp judge: " + op + " on"):])  # the score table, for the log


@pytest.mark.parametrize("backend", backends())
def test_judge_rejects_every_known_wrong_solution(backend, tmp_path):
    student = tmp_path / "student"
    verdicts = {}
    for wrong in wrong_solutions.solutions(backend):
        write(student, backend, wrong.source)
        code, out = judge(backend, student, "--no-timing")
        verdict = next((line for line in out.splitlines() if line.startswith("REJECTED")), None)
        verdicts[wrong.name] = (code, out if verdict is None else out[out.index(verdict):])
    for name, (code, out) in verdicts.items():
        wrong = next(w for w in wrong_solutions.solutions(backend) if w.name == name)
        assert code == 1 and "REJECTED at" in out, f"{name} was not rejected:\n{out[-3000:]}"
        assert re.search(wrong.reason, out), f"{name}: expected /{wrong.reason}/ in\n{out[-3000:]}"
