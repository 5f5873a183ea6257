"""scripts/perf/ab_bench.sh: two builds of the library timed in turns, then compared with
tests/compare_bench.py; end to end on the CPU backend (the script needs the source tree: the
installed-package suite leaves this file out)."""

import os
import subprocess
from pathlib import Path

import pytest

from operator_runtime_testing import backends

REPO = Path(__file__).resolve().parents[1]


def test_ab_bench_two_builds(tmp_path):
    """scripts/perf/ab_bench.sh: both builds in alternating rounds, then the comparison of every
    record against A's first; a folder without the library is a clear error before any run."""
    target = backends.select("cpu")
    if target.skip_reason:
        pytest.skip(target.skip_reason)
    import operator_runtime as ort

    lib = Path(ort.library_path()).resolve()
    builds = []
    for name in ("a", "b"):
        (tmp_path / name).mkdir()
        (tmp_path / name / lib.name).symlink_to(lib)
        builds.append(str(tmp_path / name))
    script = ["bash", str(REPO / "scripts" / "perf" / "ab_bench.sh")]
    args = ["--", "--op", "relu", "--backend", "cpu", "--shape", "4096", "--dtype", "f32", "--repeats", "1",
            "--rotate-mib", "0"]
    env = {**os.environ, "OUT_DIR": str(tmp_path / "out")}
    p = subprocess.run(script + builds + ["--rounds", "2"] + args, capture_output=True, text=True, env=env)
    assert p.returncode == 0, p.stdout + p.stderr
    assert "round 2, build b" in p.stdout.split("round 2, build a")[0]  # the second round starts with B
    for name in ("a_1.json", "a_2.json", "b_1.json", "b_2.json"):
        assert (tmp_path / "out" / name).is_file() and f"{name}:" in p.stdout
    assert "relu" in p.stdout and "(2 rows, geometric mean" in p.stdout
    p = subprocess.run(script + [builds[0], str(tmp_path)] + args, capture_output=True, text=True, env=env)
    assert p.returncode == 2 and "holds no libcamp_ops.so" in p.stderr
