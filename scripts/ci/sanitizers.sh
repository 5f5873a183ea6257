#!/usr/bin/env bash
# The CPU variant built with AddressSanitizer + UndefinedBehaviorSanitizer
# (CMake option CAMP_SANITIZE, cmake/sanitizers.cmake) in its own build folder;
# then the C++ suite (ctest) and the Python suite (pytest --backend cpu) run on
# it. Fails on any test failure and on any sanitizer report, also one printed
# by a subprocess.
#
# Python is not instrumented: the ASan runtime is preloaded (LD_PRELOAD) so it
# comes first, and leak detection is off for the interpreter (CPython keeps
# objects alive at exit on purpose). The C++ tests run with leak detection on.
#
# Variables: SAN_BUILD_DIR (default build-asan), CXX/CC (default c++/cc: GCC or
# Clang both work), JOBS, PYTHON.
set -euo pipefail
REPO_ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
BUILD_DIR="${SAN_BUILD_DIR:-$REPO_ROOT/build-asan}"
PYTHON="${PYTHON:-python3}"
JOBS="${JOBS:-$(nproc 2>/dev/null || echo 2)}"
CXX="${CXX:-c++}"
CC="${CC:-cc}"
REPORT_RE='ERROR: AddressSanitizer|ERROR: LeakSanitizer|runtime error:|UndefinedBehaviorSanitizer'
# Reports also go to files: pytest captures a test's stderr, and a process that
# aborts on a report takes the captured text with it.
LOG_DIR="$BUILD_DIR/sanitizer-logs"
UBSAN="halt_on_error=1:print_stacktrace=1:log_path=$LOG_DIR/ubsan"

log() { printf '\n== %s\n' "$*"; }

"$PYTHON" -m pip install -q -r "$REPO_ROOT/requirements.txt"

log "build $BUILD_DIR (CAMP_SANITIZE=address,undefined, $("$CXX" --version | head -1))"
cmake -S "$REPO_ROOT" -B "$BUILD_DIR" -DCMAKE_BUILD_TYPE=RelWithDebInfo \
    -DCMAKE_CXX_COMPILER="$CXX" -DCMAKE_C_COMPILER="$CC" -DCAMP_SANITIZE=address,undefined \
    -DCAMP_ENABLE_NVIDIA=OFF -DCAMP_ENABLE_METAX=OFF >/dev/null
cmake --build "$BUILD_DIR" -j "$JOBS"

# The ASan runtime the library was linked against, for preloading into Python.
if "$CXX" --version | grep -qi clang; then
    ASAN_RUNTIME="$("$CXX" -print-file-name=libclang_rt.asan-x86_64.so)"
else
    ASAN_RUNTIME="$("$CXX" -print-file-name=libasan.so)"
fi
[[ -f "$ASAN_RUNTIME" ]] || { echo "ci/sanitizers.sh: ASan runtime not found ($ASAN_RUNTIME)" >&2; exit 1; }

rm -rf "$LOG_DIR"
mkdir -p "$LOG_DIR"
status=0
log "ctest (ASan + UBSan)"
(cd "$BUILD_DIR" && ASAN_OPTIONS="detect_leaks=1:abort_on_error=1:log_path=$LOG_DIR/asan" UBSAN_OPTIONS="$UBSAN" \
    ctest --output-on-failure -j "$JOBS" 2>&1) | tee "$BUILD_DIR/ctest.log" | tail -5 || status=1

# The tooling tests (camp.py exercise/new-op, the documented commands) build their own
# unsanitized copies of the library with cmake, g++ and nvcc, which must not run with the
# ASan runtime preloaded (nvcc crashes under it); they run in the plain suite instead.
log "pytest --backend cpu (ASan + UBSan, $ASAN_RUNTIME preloaded)"
(cd "$REPO_ROOT" && CAMP_BUILD_DIR="$BUILD_DIR" PYTHONPATH="$REPO_ROOT/python${PYTHONPATH:+:$PYTHONPATH}" \
    LD_PRELOAD="$ASAN_RUNTIME" ASAN_OPTIONS="detect_leaks=0:log_path=$LOG_DIR/asan" UBSAN_OPTIONS="$UBSAN" \
    "$PYTHON" -m pytest "$REPO_ROOT/tests" -q -rs --backend cpu -p no:cacheprovider \
    --ignore="$REPO_ROOT/tests/test_camp_exercise.py" --ignore="$REPO_ROOT/tests/test_camp_newop.py" \
    --ignore="$REPO_ROOT/tests/test_camp_guide.py" --ignore="$REPO_ROOT/tests/test_camp_judge.py" \
    --ignore="$REPO_ROOT/tests/test_docs_commands.py" 2>&1) \
    | tee "$BUILD_DIR/pytest.log" | tail -5 || status=1

if compgen -G "$LOG_DIR/*" >/dev/null; then
    for report in "$LOG_DIR"/*; do
        printf '\n---- %s\n' "$report"
        head -60 "$report"
    done
    echo "ci/sanitizers.sh: sanitizer reports above ($LOG_DIR)" >&2
    status=1
fi
if grep -E -n "$REPORT_RE" "$BUILD_DIR/ctest.log" "$BUILD_DIR/pytest.log"; then
    echo "ci/sanitizers.sh: sanitizer reports above (logs: $BUILD_DIR/ctest.log, pytest.log)" >&2
    status=1
fi
if [[ $status != 0 ]]; then
    echo "ci/sanitizers.sh: FAILED (logs: $BUILD_DIR/ctest.log, $BUILD_DIR/pytest.log)" >&2
    exit 1
fi
echo "ci/sanitizers.sh: ctest and pytest pass on the ASan + UBSan build with no report"
