"""tests/compare_bench.py: our time per case across bench records, the ratio to the first, the
counts of faster and slower cases, the kernel a plan changed to, and the best peer of any record;
once end to end on two CPU bench runs."""

import io
import json
import subprocess
import sys
from pathlib import Path

import pytest

import compare_bench
from operator_runtime_testing import backends

REPO = Path(__file__).resolve().parents[1]


def record(path, cases, peers=None):
    """A bench record with `cases`: {(case, dtype): (ours_s, kernel)}; peers: {(case, dtype):
    {peer: seconds}} (the same time in both conditions)."""
    results = []
    for (case, dtype), (sec, kernel) in cases.items():
        impls = {"ours": {c: {"status": "ok", "median_s": sec} for c in ("dram", "hot")}}
        for name, psec in (peers or {}).get((case, dtype), {}).items():
            impls[name] = {c: {"status": "ok", "median_s": psec} for c in ("dram", "hot")}
        results.append({"op": "softmax", "case": case, "dtype": dtype, "kernel": kernel,
                        "implementations": impls})
    path.write_text(json.dumps({"environment": {"date": "today", "device": "a GPU"}, "results": results}))
    return str(path)


def test_ratios_counts_kernels_and_peers(tmp_path):
    before = record(tmp_path / "before.json",
                    {("8x1024", "f32"): (10e-6, "rows_registers"), ("8x4096", "f32"): (20e-6, "rows_registers"),
                     ("8x8192", "bf16"): (30e-6, "ring")},
                    peers={("8x1024", "f32"): {"torch": 9e-6, "triton": 12e-6}})
    after = record(tmp_path / "after.json",
                   {("8x1024", "f32"): (8e-6, "rows_registers"), ("8x4096", "f32"): (20.2e-6, "rows_registers"),
                    ("8x8192", "bf16"): (33e-6, "cluster")})
    out = io.StringIO()
    summary = compare_bench.compare([before, after], threshold=0.02, out=out)
    text = out.getvalue()
    # Both conditions of each case: 8x1024 faster (0.80), 8x4096 level (1.01), 8x8192 slower (1.10).
    assert summary["after.json"]["faster"] == 2 and summary["after.json"]["slower"] == 2
    assert summary["after.json"]["level"] == 2
    assert summary["after.json"]["geomean"] == pytest.approx((0.8 * 1.01 * 1.1) ** (1 / 3))
    assert "(0.80)*" in text and "(1.01) " in text and "(1.10)*" in text
    assert "[cluster]" in text and "[rows_registers]" not in text  # only the kernel that changed
    # The best peer is torch's 9 us: the first file (10 us) is behind it, the second (8 us) ahead.
    assert summary["before.json"] == {"behind": 2, "counted": 2}
    assert summary["after.json"]["behind"] == 0 and summary["after.json"]["counted"] == 2
    assert "peer      9.00 torch (1.12x)" in text


def test_peers_from_another_record_and_changed_only(tmp_path):
    before = record(tmp_path / "a.json", {("8x1024", "f32"): (10e-6, "k"), ("8x2048", "f32"): (10e-6, "k")})
    after = record(tmp_path / "b.json", {("8x1024", "f32"): (10e-6, "k"), ("8x2048", "f32"): (5e-6, "k")})
    (tmp_path / "peers").mkdir()
    record(tmp_path / "peers" / "softmax-results.json", {("8x1024", "f32"): (1.0, "k")},
           peers={("8x1024", "f32"): {"quack": 7e-6}})
    out = io.StringIO()
    summary = compare_bench.compare([before, after], peer_paths=[str(tmp_path / "peers")], changed_only=True,
                                    out=out)
    rows = [line for line in out.getvalue().splitlines() if line.strip().startswith("softmax")]
    assert len(rows) == 2 and all("8x2048" in line for line in rows)  # 8x1024 did not change
    assert summary["b.json"]["behind"] == 2 and summary["b.json"]["counted"] == 2  # quack's 7 us on 8x1024


def test_a_case_missing_from_a_later_record(tmp_path):
    before = record(tmp_path / "a.json", {("8x1024", "f32"): (10e-6, "k"), ("8x2048", "f32"): (10e-6, "k")})
    after = record(tmp_path / "b.json", {("8x1024", "f32"): (11e-6, "k")})
    out = io.StringIO()
    summary = compare_bench.compare([before, after], out=out)
    assert summary["b.json"]["slower"] == 2 and summary["b.json"]["faster"] == 0
    assert sum(summary["b.json"][k] for k in ("faster", "slower", "level")) == 2


def test_errors_are_one_line(tmp_path):
    good = record(tmp_path / "a.json", {("8x1024", "f32"): (10e-6, "k")})
    (tmp_path / "bad.json").write_text('{"not": "a record"}')
    run = [sys.executable, str(REPO / "tests" / "compare_bench.py")]
    p = subprocess.run(run + [good, str(tmp_path / "bad.json")], capture_output=True, text=True)
    assert p.returncode == 2 and "not a record of tests/run_ops.py --mode bench" in p.stderr
    assert "Traceback" not in p.stderr
    p = subprocess.run(run + [good, str(tmp_path / "missing.json")], capture_output=True, text=True)
    assert p.returncode == 2 and "missing.json" in p.stderr and "Traceback" not in p.stderr
    p = subprocess.run(run + [good], capture_output=True, text=True)
    assert p.returncode == 2 and "at least two records" in p.stderr


def test_two_cpu_bench_runs(tmp_path):
    """The records run_ops.py writes, compared as the module docstring shows."""
    target = backends.select("cpu")
    if target.skip_reason:
        pytest.skip(target.skip_reason)
    bench = [sys.executable, str(REPO / "tests" / "run_ops.py"), "--op", "relu", "--backend", "cpu",
             "--mode", "bench", "--shape", "4096", "--dtype", "f32", "--peers", "numpy", "--repeats", "1",
             "--rotate-mib", "0"]
    paths = []
    for name in ("before.json", "after.json"):
        p = subprocess.run(bench + ["--json", str(tmp_path / name)], capture_output=True, text=True)
        assert p.returncode == 0, p.stdout + p.stderr
        paths.append(str(tmp_path / name))
    p = subprocess.run([sys.executable, str(REPO / "tests" / "compare_bench.py")] + paths,
                       capture_output=True, text=True)
    assert p.returncode == 0, p.stderr
    assert "relu" in p.stdout and "2^12" in p.stdout and "peer" in p.stdout and "numpy" in p.stdout
    assert "after.json:" in p.stdout and "(2 rows, geometric mean" in p.stdout
