#!/usr/bin/env bash
# Packaging check, as CI runs it on a clean machine: the project installed the
# ways its users install it, then tested from the installation only.
#
#   1. a fresh virtual environment (python3 -m venv)
#   2. pip install .[test]          (scikit-build-core drives the CMake build)
#   3. the installed package: imported from site-packages, its own libcamp_ops.so
#   4. pytest against the installed package: tests/ and the test oracle
#      (python/operator_runtime_testing) copied out of the source tree,
#      CAMP_BUILD_DIR and PYTHONPATH unset, CAMP_EXPECT_INSTALLED=1
#   5. pip install -e .             (the editable install loads the same way)
#   6. cmake --install of a fresh build into a fresh prefix
#   7. examples/cpp built against that prefix with find_package, and run
#
# Variables: PYTHON (default python3), JOBS (default: cores), TEST_BACKEND
# (default cpu), CAMP_ENABLE_NVIDIA=ON (the NVIDIA variant, in both the wheel
# and the CMake install; needs nvcc), CMAKE_CUDA_ARCHITECTURES, CAMP_PACKAGE_WORK
# (work folder, default a new temporary one, removed on success), and
# CAMP_PACKAGE_OFFLINE=1 for a machine without a package index: the venv then
# also sees $PYTHON's site-packages (a .pth file; $PYTHON may be a venv itself),
# which must hold numpy, ml_dtypes, pytest and scikit-build-core, and pip builds
# without isolation.
set -euo pipefail
REPO_ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
PYTHON="${PYTHON:-python3}"
JOBS="${JOBS:-$(nproc 2>/dev/null || echo 2)}"
TEST_BACKEND="${TEST_BACKEND:-cpu}"
NVIDIA="${CAMP_ENABLE_NVIDIA:-OFF}"
WORK="${CAMP_PACKAGE_WORK:-$(mktemp -d "${TMPDIR:-/tmp}/camp-package.XXXXXX")}"
mkdir -p "$WORK"
VENV="$WORK/venv"
VPY="$VENV/bin/python"
STEPS=7
step=0
current="setup"

header() {
    step=$((step + 1))
    current="[$step/$STEPS] $*"
    printf '\n== %s\n' "$current"
}
on_exit() {
    local rc=$?
    if [[ $rc -ne 0 ]]; then
        printf '\nci_package: FAILED at %s (exit %d); work folder kept: %s\n' "$current" "$rc" "$WORK" >&2
    elif [[ -z "${CAMP_PACKAGE_WORK:-}" ]]; then
        rm -rf "$WORK"
    fi
}
trap on_exit EXIT

# Nothing from the developer's environment may point the package at a library.
unset CAMP_BUILD_DIR PYTHONPATH
PIP_ARGS=(-C "build-dir=$WORK/wheel-build" -C "cmake.define.CAMP_ENABLE_NVIDIA=$NVIDIA")
OFFLINE="${CAMP_PACKAGE_OFFLINE:-0}"
if [[ "$OFFLINE" == 1 ]]; then
    PIP_ARGS+=(--no-index --no-build-isolation)
fi
CMAKE_ARGS=(-DCMAKE_BUILD_TYPE=Release -DCAMP_BUILD_TESTS=OFF -DCAMP_ENABLE_NVIDIA="$NVIDIA")
if [[ -n "${CMAKE_CUDA_ARCHITECTURES:-}" ]]; then
    PIP_ARGS+=(-C "cmake.define.CMAKE_CUDA_ARCHITECTURES=$CMAKE_CUDA_ARCHITECTURES")
    CMAKE_ARGS+=(-DCMAKE_CUDA_ARCHITECTURES="$CMAKE_CUDA_ARCHITECTURES")
fi
echo "source $REPO_ROOT; work folder $WORK; NVIDIA backend $NVIDIA; tests on --backend $TEST_BACKEND"

header "fresh virtual environment ($VENV)"
"$PYTHON" -m venv "$VENV"
if [[ "$OFFLINE" == 1 ]]; then
    "$PYTHON" -c 'import site; print("\n".join(site.getsitepackages()))' \
        > "$("$VPY" -c 'import sysconfig; print(sysconfig.get_paths()["purelib"])')/camp_offline.pth"
fi
"$VPY" --version
"$VPY" -m pip --version

header "pip install .[test]"
"$VPY" -m pip install "${PIP_ARGS[@]}" "$REPO_ROOT[test]"
"$VPY" -m pip show operator-runtime | sed -n '1,3p'

header "the installed package"
(cd "$WORK" && "$VPY" - "$REPO_ROOT" <<'EOF'
import re
import sys
from pathlib import Path

import operator_runtime as ort

cmakelists = (Path(sys.argv[1]) / "CMakeLists.txt").read_text()
source_version = re.search(r"project\(\s*operator_runtime\s+VERSION\s+([0-9.]+)", cmakelists).group(1)
package = Path(ort.__file__).resolve().parent
library = Path(ort.library_path()).resolve()
print(f"operator_runtime {ort.__version__} from {package}")
print(f"library {library} (oprt_version {ort.library_version()}); backends {ort.available_backends()}")
assert "site-packages" in package.parts, f"not an installed package: {package}"
assert library.parent == package, f"the library is not the packaged one: {library}"
assert ort.library_version() == ort.__version__, "oprt_version() and __version__ differ"
assert ort.__version__ == source_version, f"CMakeLists.txt says {source_version}"
# The compiled hit path (_fastcall) is built wherever this Python has its headers.
import sysconfig
info = ort.fast_call_info()
print(f"fast_call_info: {info}")
if (Path(sysconfig.get_paths()["include"]) / "Python.h").is_file():
    assert info["compiled"] and Path(info["path"]).resolve().parent == package, info
try:  # the test oracle stays in the source tree: the wheel carries only what users import
    import operator_runtime_testing  # noqa: F401
    raise AssertionError(f"the wheel installed operator_runtime_testing: {operator_runtime_testing.__file__}")
except ModuleNotFoundError:
    pass
EOF
)

header "pytest against the installed package (tests copied to $WORK/suite)"
rm -rf "$WORK/suite"
mkdir -p "$WORK/suite"
cp -r "$REPO_ROOT/tests" "$WORK/suite/tests"
# The test oracle travels with the tests (tests/conftest.py puts suite/python on the path); the
# package itself comes from the installation only.
mkdir -p "$WORK/suite/python"
cp -r "$REPO_ROOT/python/operator_runtime_testing" "$WORK/suite/python/"
# The tests of the checkout's own tools (camp.py exercise/judge/new-op, the camp guide, the
# commands in the docs, the CMake configuration, scripts/perf/ncu_hotspots.py, sass_loads.py and
# ab_bench.sh) need the source tree, not the package: they run in the plain suite.
rm -f "$WORK/suite/tests/test_camp_exercise.py" "$WORK/suite/tests/test_camp_newop.py" \
      "$WORK/suite/tests/test_camp_guide.py" "$WORK/suite/tests/test_camp_judge.py" \
      "$WORK/suite/tests/test_build_config.py" "$WORK/suite/tests/test_docs_commands.py" \
      "$WORK/suite/tests/test_ncu_hotspots.py" "$WORK/suite/tests/test_sass_loads.py" \
      "$WORK/suite/tests/test_ab_bench.py"
find "$WORK/suite" -name __pycache__ -prune -exec rm -rf {} +
(cd "$WORK/suite" && CAMP_EXPECT_INSTALLED=1 "$VPY" -m pytest tests -q -rs -p no:cacheprovider \
    --backend "$TEST_BACKEND")

header "pip install -e . (editable)"
"$VPY" -m pip install "${PIP_ARGS[@]}" -e "$REPO_ROOT"
(cd "$WORK" && "$VPY" - "$REPO_ROOT" <<'EOF'
import sys
from pathlib import Path

import operator_runtime as ort

source = Path(sys.argv[1]).resolve() / "python" / "operator_runtime"
package = Path(ort.__file__).resolve().parent
library = Path(ort.library_path()).resolve()
print(f"operator_runtime {ort.__version__} from {package}; library {library}")
assert package == source, f"the editable install imports {package}, not {source}"
assert "site-packages" in library.parts, f"not the library of the editable install: {library}"
info = ort.fast_call_info()
print(f"fast_call_info: {info}")
import sysconfig
if (Path(sysconfig.get_paths()["include"]) / "Python.h").is_file():
    assert info["compiled"] and "site-packages" in Path(info["path"]).parts, info
assert ort.library_version() == ort.__version__, "oprt_version() and __version__ differ"
EOF
)
"$VPY" -m pip uninstall -y -q operator-runtime

header "cmake --install into a fresh prefix ($WORK/prefix)"
rm -rf "$WORK/cmake-build" "$WORK/prefix"
cmake -S "$REPO_ROOT" -B "$WORK/cmake-build" "${CMAKE_ARGS[@]}"
cmake --build "$WORK/cmake-build" -j "$JOBS"
cmake --install "$WORK/cmake-build" --prefix "$WORK/prefix"
for f in include/operator_runtime/operator_runtime.h include/operator_runtime/version.h \
         lib/libcamp_ops.so lib/cmake/operator_runtime/operator_runtimeConfig.cmake \
         lib/cmake/operator_runtime/operator_runtimeConfigVersion.cmake \
         lib/cmake/operator_runtime/operator_runtimeTargets.cmake; do
    [[ -e "$WORK/prefix/$f" ]] || { echo "missing from the install: $f" >&2; exit 1; }
done
extra=$(cd "$WORK/prefix/include" && find . -type f | sort | grep -v -x -E '\./operator_runtime/(api|operator_runtime|version)\.h|\./operator_runtime/ops/[a-z_0-9]+\.h' || true)
if [[ -n "$extra" ]]; then
    echo "non-public headers were installed: $extra" >&2
    exit 1
fi

header "examples/cpp against the installed package"
rm -rf "$WORK/example-build"
cmake -S "$REPO_ROOT/examples/cpp" -B "$WORK/example-build" -DCMAKE_PREFIX_PATH="$WORK/prefix" \
    -DCMAKE_BUILD_TYPE=Release
found="$(sed -n 's/^operator_runtime_DIR:PATH=//p' "$WORK/example-build/CMakeCache.txt")"
[[ "$found" == "$WORK/prefix/"* ]] || { echo "find_package used $found, not $WORK/prefix" >&2; exit 1; }
cmake --build "$WORK/example-build" -j "$JOBS"
"$WORK/example-build/oprt_example"

current="done"
printf '\nci_package: all %d steps passed\n' "$STEPS"
