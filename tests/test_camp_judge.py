"""The judge (`camp.py judge`) judged: a correct exercise is accepted and scored, and every
known-wrong solution (scripts/camp_tools/wrong_solutions.py) is rejected with its reason.

CPU always (the sanitizer stage is skipped there, with the reason printed); NVIDIA where a
GPU is visible to torch and nvcc is on PATH (there compute-sanitizer must catch the racy
reduction and the tiled matmul missing its second barrier). matmul is scored in TFLOPS
against the peer library (numpy, torch.matmul) instead of the copy ceiling. Builds go to <repo>/build-camp-test (CPU, shared with test_camp_exercise.py)
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
    """reduce_sum and matmul (the one op scored against a peer) on every backend; on NVIDIA
    every op (each is built and timed: minutes on the CPU machine, where two ops show the
    flow)."""
    params = [pytest.param(backend_param.values[0], op, marks=backend_param.marks,
                           id=f"{backend_param.values[0]}-{op}")
              for backend_param in backends() for op in ("reduce_sum", "matmul")]
    nvidia = params[-1]
    params += [pytest.param("nvidia", op, marks=nvidia.marks, id=f"nvidia-{op}")
               for op in scaffolds.OPS if op not in ("reduce_sum", "matmul")]
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
    if op == "matmul":  # TFLOPS as a share of the peer's, measured in the same run
        peer = "numpy" if backend == "cpu" else "torch"
        assert re.search(r"^\s+case \(MxKxN\)\s+dtype\s+student us\s+TFLOPS\s+peer TFLOPS\s+%peer",
                         out, re.M), out
        m = re.search(rf"^score: ([\d.]+)% of {peer}'s TFLOPS", out, re.M)
    else:
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
        write(student, backend, wrong.source, wrong.op)
        code, out = judge(backend, student, "--no-timing", op=wrong.op)
        verdict = next((line for line in out.splitlines() if line.startswith("REJECTED")), None)
        verdicts[wrong.name] = (code, out if verdict is None else out[out.index(verdict):])
    for name, (code, out) in verdicts.items():
        wrong = next(w for w in wrong_solutions.solutions(backend) if w.name == name)
        assert code == 1 and "REJECTED at" in out, f"{name} was not rejected:\n{out[-3000:]}"
        assert re.search(wrong.reason, out), f"{name}: expected /{wrong.reason}/ in\n{out[-3000:]}"


def test_the_matmul_score_is_a_share_of_the_peer(capsys):
    """print_score for matmul (no build needed): TFLOPS, the peer's, %peer, the ladder steps
    beaten; a row the peer cannot run (numpy has no bf16 GEMM) is shown but not scored."""
    flops = 2 * 256 ** 3
    rows = [{"shape": [256, 256, 256], "dtype": "f32", "seconds": flops / 2e12, "flops": flops,
             "tflops": 2.0, "peer_tflops": 8.0, "fraction": 0.25,
             "others": {"naive": flops / 1e12, "ikj": flops / 4e12, "auto": flops / 8e12}},
            {"shape": [256, 256, 256], "dtype": "bf16", "seconds": flops / 1e12, "flops": flops,
             "tflops": 1.0, "peer_why": "np.matmul has no BLAS kernel for bfloat16",
             "others": {"naive": flops / 0.5e12}}]
    score, steps = judge_module.print_score("matmul", "cpu", rows, None, ["naive", "ikj"], "numpy")
    out = capsys.readouterr().out
    assert score == pytest.approx(0.25) and steps == ["naive"], out
    assert re.search(r"256x256x256\s+f32\s+16\.8\s+2\s+8\s+25\.0%\s+8\s+naive$", out, re.M), out
    assert re.search(r"256x256x256\s+bf16\s+33\.6\s+1\s+-\s+-\s+-\s+naive$", out, re.M), out
    assert "no %peer for bf16: np.matmul has no BLAS kernel" in out, out
    assert "score: 25.0% of numpy's TFLOPS" in out, out
