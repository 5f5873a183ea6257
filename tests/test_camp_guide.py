"""docs/camp.md's 10-minute path, run as printed by a learner without a GPU, in a fresh copy
of the repository's tracked files (no build folders, no student/).

The environment is the learner's: no PYTHONPATH, CAMP_BUILD_DIR or BUILD_DIR, and no GPU (an
nvidia-smi that finds none comes first on PATH, so `camp.py exercise` picks the CPU as on a
machine without a GPU, even on a GPU host). The
README's setup command is stood in for by its build step alone (`build_cpu.sh build`, without
the GoogleTest suite; the full quickstart also checks and times every operator). Then every
command of the blocks marked `<!-- camp-guide -->` runs in order and must exit 0, with the
guide's own "stuck?" body pasted into the scaffold between the first two blocks, as the
learner would. About three minutes on two cores, most of it the build.
"""

import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from test_camp_newop import tracked_copy

REPO = Path(__file__).resolve().parents[1]
GUIDE = REPO / "docs" / "camp.md"
sys.path.insert(0, str(REPO / "scripts"))

from camp_tools import scaffolds  # noqa: E402


def guide_blocks():
    """The ```bash blocks right after a `<!-- camp-guide -->` line, as lists of commands."""
    blocks = re.findall(r"<!-- camp-guide -->\s*```bash\n(.*?)```", GUIDE.read_text(), re.S)
    return [[re.split(r"\s+#\s", line, maxsplit=1)[0].strip() for line in block.splitlines()
             if line.strip() and not line.lstrip().startswith("#")] for block in blocks]


def guide_body(backend="cpu"):
    """The body the guide offers to a stuck learner (its ```cpp block; ```cuda on a GPU)."""
    fence = "cpp" if backend == "cpu" else "cuda"
    (body,) = re.findall(rf"```{fence}\n(.*?)```", GUIDE.read_text(), re.S)
    return body


def learner_env(tools):
    env = {k: v for k, v in os.environ.items()
           if k not in ("CAMP_BUILD_DIR", "BUILD_DIR", "PYTHONPATH", "CAMP_FORCE_RECONFIGURE")}
    # No GPU: an nvidia-smi first on PATH that finds none (the real one may sit in /usr/bin).
    tools.mkdir()
    smi = tools / "nvidia-smi"
    smi.write_text("#!/bin/sh\necho 'No devices were found (test_camp_guide.py)' >&2\nexit 6\n")
    smi.chmod(0o755)
    env["PATH"] = os.pathsep.join([str(tools), str(Path(sys.executable).parent), env.get("PATH", "")])
    env["JOBS"] = env.get("JOBS", "2")
    return env


def run(command, cwd, env):
    r = subprocess.run(["bash", "-c", command], cwd=cwd, env=env, capture_output=True,
                       text=True, timeout=900)
    assert r.returncode == 0, (f"`{command}` failed ({r.returncode}):\n"
                               f"{r.stdout[-4000:]}\n{r.stderr[-4000:]}")
    return r.stdout + r.stderr


@pytest.mark.parametrize("backend", ["cpu", "nvidia"])
def test_the_guide_body_is_the_tested_solution(backend):
    # test_camp_exercise.py checks (cpu) and compiles (nvidia) the same bodies
    assert guide_body(backend) == scaffolds.correct_body("softmax", backend)


def test_the_guide_starts_from_the_readme_setup():
    readme = (REPO / "README.md").read_text()
    assert "bash scripts/quickstart.sh" in readme.split("\n## ", 1)[0]
    assert "bash scripts/quickstart.sh" in GUIDE.read_text()
    assert "(docs/camp.md)" in readme.split("\n## ", 1)[0], "the README's first screen links the guide"


def test_the_guide_as_printed(tmp_path):
    if sys.platform != "linux" or shutil.which("cmake") is None:
        pytest.skip("needs Linux and cmake to build the CPU variant")
    if not (REPO / ".git").exists():
        pytest.skip("needs a git checkout (the copy is `git ls-files`)")
    root = tmp_path / "repo"
    root.mkdir()
    tracked_copy(root)
    env = learner_env(tmp_path / "bin")
    run("cmake -S . -B build-cpu -DCMAKE_BUILD_TYPE=Release -DCAMP_BUILD_TESTS=OFF "
        "-DCAMP_ENABLE_NVIDIA=OFF -DCAMP_ENABLE_METAX=OFF > /dev/null && "
        "bash scripts/build_cpu.sh build > /dev/null", root, env)

    exercise, check, more, done = guide_blocks()
    out = "".join(run(c, root, env) for c in exercise)
    assert "camp: backend cpu" in out, out
    scaffold = root / "student" / "cpu" / "softmax_student.cc"
    scaffold.write_text(scaffolds.replace_body(scaffold.read_text(), guide_body()))

    check_out, ladder_out = (run(c, root, env) for c in check)
    assert re.search(r"^PASS: \d+ cases", check_out, re.M), check_out
    rows = re.findall(r"^softmax\s+1024x1024\s+f32\s+(\w+)\s+\S+.*\sok$", ladder_out, re.M)
    assert rows == ["student", "three_pass", "online", "vectorized", "auto"], ladder_out

    pytest_out, python_out = (run(c, root, env) for c in more)
    assert re.search(r"\d+ passed", pytest_out) and "failed" not in pytest_out, pytest_out
    assert "student" in python_out and str(root.resolve() / "build-cpu") in python_out, python_out
    (reset,) = done
    reset_out = run(reset, root, env)
    assert not scaffold.exists(), reset_out
    after = run(more[1], root, env)
    assert "student" not in after, after
