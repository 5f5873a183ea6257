"""The operator generator end to end, on a copy of the repository's tracked files.

Runs the command blocks of docs/how-to-add-an-operator.md marked `<!-- camp-test -->`
(so the guide's commands cannot rot): they generate an elementwise and a reduction
operator, build the CPU variant and run the new operators' tests. The generator writes new
files and the manifest entry only: no other file of the copy changes but ops/manifest.json and
README.md's generated operator table. The C++ tests' table comes from the manifest too: the
GoogleTest suite is built and run on the new operators' rows. Then: running the generator
again for an existing operator refuses and changes nothing, and the generated NVIDIA and MetaX
units compile with nvcc (compile only; skipped without nvcc).
About six minutes on two cores, most of it compiling the GoogleTest suite.
"""

import json
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]
GUIDE = REPO / "docs" / "how-to-add-an-operator.md"
NVCC = shutil.which("nvcc") or ("/usr/local/cuda/bin/nvcc"
                                if Path("/usr/local/cuda/bin/nvcc").exists() else None)


def guide_blocks():
    """The ```bash blocks right after a `<!-- camp-test -->` line, as lists of command lines."""
    text = GUIDE.read_text()
    blocks = re.findall(r"<!-- camp-test -->\s*```bash\n(.*?)```", text, re.S)
    return [[line.split(" #")[0].strip() for line in block.splitlines()
             if line.strip() and not line.lstrip().startswith("#")] for block in blocks]


def tracked_files():
    # Tracked and untracked-but-not-ignored files: the working tree without builds.
    files = subprocess.run(["git", "ls-files", "-z", "--cached", "--others", "--exclude-standard"],
                           cwd=REPO, check=True,
                           capture_output=True).stdout.decode().split("\0")
    return [rel for rel in files if rel and (REPO / rel).is_file()]


def tracked_copy(dest):
    for rel in tracked_files():
        src = REPO / rel
        if src.is_file():  # a tracked file deleted in the working tree is skipped
            (dest / rel).parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(src, dest / rel)


def run(command, cwd, env):
    result = subprocess.run(["bash", "-c", command], cwd=cwd, env=env, capture_output=True,
                            text=True, timeout=900)
    assert result.returncode == 0, (f"`{command}` failed ({result.returncode}):\n"
                                    f"{result.stdout[-4000:]}\n{result.stderr[-4000:]}")
    return result.stdout


@pytest.fixture(scope="module")
def generated(tmp_path_factory):
    """The copy after the guide's commands ran, and the environment they ran in."""
    if sys.platform != "linux" or shutil.which("cmake") is None:
        pytest.skip("needs Linux and cmake to build the CPU variant")
    if not (REPO / ".git").exists():
        pytest.skip("needs a git checkout (the copy is `git ls-files`)")
    root = tmp_path_factory.mktemp("newop") / "repo"
    root.mkdir()
    tracked_copy(root)
    # The guide's operators, made in this checkout by following the guide by hand: its
    # commands would refuse to make them again.
    made = {m for block in guide_blocks() for line in block
            for m in re.findall(r"camp\.py new-op (\w+)", line)}
    taken = sorted(made & {entry["name"] for entry in
                           json.loads((root / "ops" / "manifest.json").read_text())["ops"]})
    if taken:
        pytest.skip(f"this checkout already has the operators {', '.join(taken)} that "
                    f"{GUIDE.name} creates (by following it): this test runs the guide's commands "
                    f"on a copy of the checkout, where they would refuse to create them again")
    env = {k: v for k, v in os.environ.items()
           if k not in ("CAMP_BUILD_DIR", "BUILD_DIR", "PYTHONPATH", "CAMP_FORCE_RECONFIGURE")}
    env["JOBS"] = env.get("JOBS", "2")
    env["PATH"] = f"{Path(sys.executable).parent}{os.pathsep}{env.get('PATH', '')}"
    # Configure once without the GoogleTest suite: build_cpu.sh then finds the folder
    # configured and builds only the library the Python tests need.
    run("cmake -S . -B build-cpu -DCMAKE_BUILD_TYPE=Release -DCAMP_BUILD_TESTS=OFF "
        "-DCAMP_ENABLE_NVIDIA=OFF -DCAMP_ENABLE_METAX=OFF > /dev/null", root, env)
    blocks = guide_blocks()
    assert len(blocks) >= 2, f"{GUIDE.name}: expected the marked command blocks"
    outputs = [run(command, root, env) for block in blocks for command in block]
    # The whole C++ suite with the new operators in its table: their rows of the tests
    # parameterized over every operator (kernel_name_test.cc: named by operator), and every
    # test that runs all operators (threads_test.cc) with them among the rest.
    run("cmake -S . -B build-cpu -DCAMP_BUILD_TESTS=ON > /dev/null && "
        "cmake --build build-cpu -j \"$JOBS\" --target camp_cpp_tests > /dev/null", root, env)
    outputs.append(run("build-cpu/tests/cpp/camp_cpp_tests", root, env))
    return root, env, "\n".join(outputs)


def test_guide_commands_generate_build_and_pass(generated):
    root, _, output = generated
    manifest = json.loads((root / "ops/manifest.json").read_text())
    kinds = {entry["name"]: entry["kind"] for entry in manifest["ops"]}
    assert kinds["my_op"] == "elementwise" and kinds["my_sum"] == "reduction"
    for op in ("my_op", "my_sum"):
        for rel in (f"ops/{op}/{op}.cc", f"ops/{op}/nvidia/kernel.cuh",
                    f"python/operator_runtime_testing/reference/{op}.py"):
            assert (root / rel).is_file()
        assert f"| {op} | " in (root / "README.md").read_text()
        assert f'"operator_runtime/ops/{op}.h"' in (
            root / "build-cpu/include/operator_runtime/operator_runtime.h").read_text()
    assert "would create  include/operator_runtime/ops/my_op.h" in output  # --dry-run lists
    # Every command's exit status was checked; pytest did run tests (not all deselected).
    assert re.search(r"\d+ passed", output)
    assert "test: " in output and ", 0 failed" in output  # run_ops --mode test
    # GoogleTest passed, the new operators' rows among its tests.
    assert re.search(r"\[  PASSED  \] [1-9]\d* tests?", output)
    assert "/my_op" in output and "/my_sum" in output


def test_generated_python_follows_the_conventions(generated):
    """The new operators' Python functions as the project's own: type annotations (the
    conventions test over every operator), out=, a help text whose example runs."""
    root, env, _ = generated
    out = run("CAMP_BUILD_DIR=build-cpu python3 -m pytest tests/op_tests/test_conventions.py -q "
              "-k annotations", root, env)
    assert re.search(r"\b1 passed", out), out
    check = """
import doctest, numpy as np, operator_runtime as ort
for op, args, want in ((ort.my_op, (), (2, 3)), (ort.my_sum, (1,), (2,))):
    doc = op.__doc__
    assert all(w in doc for w in ("out=", "Example", "bfloat16", "prepare_")), op.__name__
    runner = doctest.DocTestRunner()
    for test in doctest.DocTestFinder().find(op, op.__name__, globs={}):
        runner.run(test)
    assert runner.tries > 0 and runner.failures == 0, op.__name__
    x = np.random.default_rng(0).standard_normal((2, 3)).astype(np.float32)
    out = np.full(want, np.nan, dtype=np.float32)
    assert op(x, *args, out=out) is out and not np.isnan(out).any()
print("conventions ok")
"""
    assert "conventions ok" in run(f"CAMP_BUILD_DIR=build-cpu PYTHONPATH=python python3 -c '{check}'",
                                   root, env)


def test_only_new_files_and_the_manifest_change(generated):
    """Adding an operator is new files plus its manifest entry: of the files that existed,
    only ops/manifest.json and README.md (its generated table) differ afterwards."""
    root, _, _ = generated
    changed = sorted(rel for rel in tracked_files() if (root / rel).is_file()
                     and (root / rel).read_bytes() != (REPO / rel).read_bytes())
    assert changed == ["README.md", "ops/manifest.json"]


def test_second_run_refuses_and_changes_nothing(generated):
    root, env, _ = generated
    before = {p: p.read_bytes() for p in (root / "ops/manifest.json", root / "README.md")}
    result = subprocess.run([sys.executable, "scripts/camp.py", "new-op", "my_op", "--kind",
                             "elementwise"], cwd=root, env=env, capture_output=True, text=True)
    assert result.returncode == 1 and "exists already" in result.stderr
    assert all(p.read_bytes() == data for p, data in before.items())


def test_dry_run_writes_nothing(generated):
    root, env, _ = generated
    result = subprocess.run([sys.executable, "scripts/camp.py", "new-op", "other_op", "--kind",
                             "reduction", "--dry-run"], cwd=root, env=env, capture_output=True,
                            text=True)
    assert result.returncode == 0 and "would create  ops/other_op/other_op.cc" in result.stdout
    assert not (root / "ops/other_op").exists()


@pytest.mark.parametrize("name, refusal", [
    ("sum", "builtin"), ("max", "builtin"), ("abs", "builtin"), ("class", "keyword"),
    ("softmax", "exists already"), ("keys", None), ("reduce_max", None),
])
def test_name_check(name, refusal):
    # A Python builtin as an operator name would shadow it in `from operator_runtime import *`.
    sys.path.insert(0, str(REPO / "scripts"))
    try:
        from camp_tools import new_op
    finally:
        sys.path.pop(0)
    if refusal is None:
        new_op.check_name(name, REPO)
    else:
        with pytest.raises(new_op.NewOpError, match=refusal):
            new_op.check_name(name, REPO)


@pytest.mark.skipif(NVCC is None, reason="nvcc not found: the generated CUDA units are not "
                                         "compiled here")
@pytest.mark.parametrize("unit, metax", [
    ("ops/my_op/nvidia/my_op_cuda.cu", False),
    ("ops/my_sum/nvidia/my_sum_cuda.cu", False),
    ("ops/my_op/metax/my_op_metax.maca", True),
    ("ops/my_sum/metax/my_sum_metax.maca", True),
])
def test_generated_gpu_units_compile(generated, unit, metax, tmp_path):
    """As cmake/nvidia.cmake compiles them; the MetaX units as scripts/ci/metax_compat.sh
    does (nvcc with 64-lane MetaX traits)."""
    root, env, _ = generated
    defs = (["-DOPRT_WITH_METAX", "-DOPRT_METAX_COMPAT_NVCC=1", "-DOPRT_DEVICE_WARP_SIZE=64",
             '-DOPRT_DEVICE_TRAITS_HEADER="runtime/gpu/device_traits_metax.cuh"']
            if metax else ["-DOPRT_WITH_NVIDIA"])
    cmd = [NVCC, "-x", "cu", "-std=c++17", "-arch=sm_90", "-c", unit, "-o", str(tmp_path / "u.o"),
           "-Iinclude", "-I.", *defs, "--expt-relaxed-constexpr", "-Werror", "all-warnings",
           "-Xcompiler=-Wall,-Wextra,-fPIC"]
    result = subprocess.run(cmd, cwd=root, env=env, capture_output=True, text=True, timeout=600)
    assert result.returncode == 0, result.stdout + result.stderr
