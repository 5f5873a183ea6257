"""The CMake project as a dependency and without GoogleTest or Python's headers: the C++
tests (and the _fastcall module) are built only when this is the top-level project, a
missing GoogleTest skips them with a warning naming it instead of failing the configure,
and missing Python headers skip _fastcall with a message naming python3-dev. Configure
only (a few seconds each)."""

import shutil
import subprocess
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]

pytestmark = pytest.mark.skipif(shutil.which("cmake") is None, reason="cmake is not installed")


def _configure(source, build, *args):
    return subprocess.run(["cmake", "-S", str(source), "-B", str(build),
                           "-DCAMP_ENABLE_NVIDIA=OFF", "-DCAMP_ENABLE_METAX=OFF", *args],
                          capture_output=True, text=True, timeout=300)


def test_consumer_with_add_subdirectory_gets_no_tests(tmp_path):
    (tmp_path / "CMakeLists.txt").write_text(
        "cmake_minimum_required(VERSION 3.22)\n"
        "project(consumer LANGUAGES C CXX)\n"
        f"add_subdirectory({REPO.as_posix()} operator_runtime)\n"
        "if(TARGET camp_cpp_tests)\n"
        "  message(FATAL_ERROR \"the runtime's C++ tests are in the consumer's build\")\n"
        "endif()\n"
        "if(TARGET camp_fastcall)\n"
        "  message(FATAL_ERROR \"the Python module _fastcall is in the consumer's build\")\n"
        "endif()\n"
        "if(NOT TARGET operator_runtime::camp_ops)\n"
        "  message(FATAL_ERROR \"no operator_runtime::camp_ops\")\n"
        "endif()\n")
    result = _configure(tmp_path, tmp_path / "build")
    assert result.returncode == 0, result.stdout + result.stderr


def test_missing_googletest_skips_the_cpp_tests_with_a_warning(tmp_path):
    result = _configure(REPO, tmp_path / "build", "-DCMAKE_DISABLE_FIND_PACKAGE_GTest=ON")
    assert result.returncode == 0, result.stdout + result.stderr
    assert "GoogleTest not found" in result.stderr and "libgtest-dev" in result.stderr


def test_missing_python_headers_skip_the_module_with_a_message(tmp_path):
    result = _configure(REPO, tmp_path / "build", "-DCAMP_BUILD_TESTS=OFF",
                        "-DCMAKE_DISABLE_FIND_PACKAGE_Python3=ON")
    assert result.returncode == 0, result.stdout + result.stderr
    assert "_fastcall module is not built" in result.stdout and "python3-dev" in result.stdout


def test_env_step_and_readme_name_python_headers():
    assert "python3-dev" in (REPO / "scripts/lib/build_common.sh").read_text()
    assert "python3-dev" in (REPO / "README.md").read_text().split("## Quick Start")[0]


def test_env_step_and_readme_name_googletest():
    assert "libgtest-dev" in (REPO / "scripts/lib/build_common.sh").read_text()
    assert "GoogleTest" in (REPO / "README.md").read_text().split("## Quick Start")[0]
