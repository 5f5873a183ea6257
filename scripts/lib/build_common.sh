# Shared by scripts/build_{cpu,nvidia,metax}.sh: the modes and the steps they
# run. A variant script sets VARIANT, BUILD_DIR, CMAKE_ARGS and TEST_BACKEND,
# then calls `main "$@"`.
set -euo pipefail

REPO_ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
PYTHON="${PYTHON:-python3}"
JOBS="${JOBS:-$(nproc 2>/dev/null || echo 2)}"

source "$REPO_ROOT/scripts/lib/gpu_visible.sh"

log() { printf '\n== %s\n' "$*"; }

usage() {
    cat <<USAGE
usage: bash scripts/build_${VARIANT}.sh [env|configure|build|test|all|clean]   (default: build)
  env        check the tools, install GoogleTest (apt, as root) and the Python requirements
  configure  run CMake into \$BUILD_DIR (again only if CAMP_FORCE_RECONFIGURE=1)
  build      configure if needed, then compile libcamp_ops.so
  test       ctest, run_ops --mode test, the examples, then pytest
  all        env, configure, build, test
  clean      remove \$BUILD_DIR
variables: BUILD_DIR=$BUILD_DIR CAMP_FORCE_RECONFIGURE=${CAMP_FORCE_RECONFIGURE:-0} JOBS=$JOBS
USAGE
}

# GoogleTest, for the C++ tests (without it CMake skips them with a warning): the
# Debian package libgtest-dev, installed with apt-get when missing and running as root.
ensure_gtest() {
    local dir
    for dir in /usr/include /usr/local/include; do
        [[ -f "$dir/gtest/gtest.h" ]] && return 0
    done
    if [[ "$(id -u)" == 0 ]] && command -v apt-get >/dev/null; then
        log "installing GoogleTest (libgtest-dev)"
        DEBIAN_FRONTEND=noninteractive apt-get install -y -qq libgtest-dev >/dev/null 2>&1 || {
            apt-get update -qq >/dev/null && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq libgtest-dev >/dev/null
        } || echo "GoogleTest: apt-get install libgtest-dev failed; the C++ tests will be skipped" >&2
    else
        echo "GoogleTest not found: the C++ tests will be skipped (install libgtest-dev, e.g." \
             "sudo apt-get install libgtest-dev, then CAMP_FORCE_RECONFIGURE=1)" >&2
    fi
}

# Python's development headers, for the extension module _fastcall (one-shot calls' hit path
# in C; without them the package uses ctypes alone): the Debian package python3-dev for
# Debian's python3 (or a virtualenv made from it), installed with apt-get when missing and
# running as root. Other Pythons (pyenv, conda, the python.org builds) ship their headers.
python_has_headers() {
    "$PYTHON" -c 'import os, sys, sysconfig; sys.exit(not os.path.isfile(os.path.join(sysconfig.get_paths()["include"], "Python.h")))'
}
ensure_python_headers() {
    python_has_headers && return 0
    if [[ "$(id -u)" == 0 ]] && command -v apt-get >/dev/null \
        && [[ "$("$PYTHON" -c 'import sys; print(sys.base_prefix)')" == /usr ]]; then
        log "installing Python's development headers (python3-dev)"
        DEBIAN_FRONTEND=noninteractive apt-get install -y -qq python3-dev >/dev/null 2>&1 || {
            apt-get update -qq >/dev/null && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq python3-dev >/dev/null
        } || true
        python_has_headers && return 0
    fi
    echo "Python.h not found for $PYTHON: the _fastcall module will not be built and one-shot" \
         "calls take the ctypes path (install the headers, e.g. sudo apt-get install python3-dev," \
         "then CAMP_FORCE_RECONFIGURE=1)" >&2
}

do_env() {
    log "environment ($VARIANT)"
    command -v cmake >/dev/null || { echo "cmake not found: install CMake >= 3.22" >&2; exit 1; }
    command -v c++ >/dev/null || { echo "no C++ compiler (c++) found" >&2; exit 1; }
    cmake --version | head -1
    c++ --version | head -1
    "$PYTHON" --version
    variant_env
    ensure_gtest
    ensure_python_headers
    "$PYTHON" -m pip install -q -r "$REPO_ROOT/requirements.txt"
}

do_configure() {
    if [[ -f "$BUILD_DIR/CMakeCache.txt" && "${CAMP_FORCE_RECONFIGURE:-0}" != 1 ]]; then
        echo "already configured: $BUILD_DIR (CAMP_FORCE_RECONFIGURE=1 to redo)"
        return
    fi
    log "configure $BUILD_DIR"
    rm -f "$BUILD_DIR/CMakeCache.txt"
    # _fastcall is built for the Python that runs the tests.
    local python_exe
    python_exe="$("$PYTHON" -c 'import sys; print(sys.executable)')"
    if ! cmake -S "$REPO_ROOT" -B "$BUILD_DIR" -DCMAKE_BUILD_TYPE="${CMAKE_BUILD_TYPE:-Release}" \
            -DPython3_EXECUTABLE="$python_exe" "${CMAKE_ARGS[@]}"; then
        # A failed configure must not count as "already configured" next time.
        rm -f "$BUILD_DIR/CMakeCache.txt"
        echo "configure failed: $BUILD_DIR" >&2
        exit 1
    fi
}

do_build() {
    do_configure
    log "build $BUILD_DIR"
    cmake --build "$BUILD_DIR" -j "$JOBS"
    note_loaded_library
}

# Python (and run_ops, camp.py) load the library operator_runtime's own lookup finds (the
# first of build-nvidia/, build-metax/, build-cpu/ in a checkout, unless CAMP_BUILD_DIR or an
# installed package says otherwise): says so when that is not this build.
note_loaded_library() {
    [[ -z "${CAMP_BUILD_DIR:-}" ]] || return 0
    local found loaded hint
    found="$(cd "$REPO_ROOT" && PYTHONPATH="$REPO_ROOT/python" "$PYTHON" -c 'if 1:
        import operator_runtime as ort
        from operator_runtime import _lib
        print(ort.library_path()); print(_lib.rebuild_hint(ort.library_path()))' 2>/dev/null)" || return 0
    loaded="$(sed -n 1p <<<"$found")" hint="$(sed -n 2p <<<"$found")"
    [[ "$(dirname "$loaded")" -ef "$BUILD_DIR" ]] && return 0
    echo "note: Python and tests/run_ops.py load $loaded, not this build: $hint"
}

# ctest in build folder $1 (further arguments to ctest), then why the tests it skipped were
# skipped: ctest itself prints only "***Skipped"; the reasons are in its log.
run_ctest() {
    local dir="$1" rc=0
    shift
    (cd "$dir" && ctest --output-on-failure "$@") || rc=$?
    local log="$dir/Testing/Temporary/LastTest.log"
    if [[ -f "$log" ]]; then
        grep -h '^\[  SKIPPED \] .* ' "$log" | grep -v -E 'listed below|\([0-9]+ ms\)$' | sort | uniq -c |
            sed -E 's/^ *([0-9]+) \[  SKIPPED \] /ctest: \1 tests skipped: /' || true
    fi
    return $rc
}

do_test() {
    [[ -f "$BUILD_DIR/libcamp_ops.so" ]] || do_build
    export CAMP_BUILD_DIR="$BUILD_DIR"
    export PYTHONPATH="$REPO_ROOT/python${PYTHONPATH:+:$PYTHONPATH}"
    log "ctest"
    run_ctest "$BUILD_DIR" -j "$JOBS"
    log "run_ops --mode test (backend $TEST_BACKEND)"
    "$PYTHON" "$REPO_ROOT/tests/run_ops.py" --op all --backend "$TEST_BACKEND" --mode test
    log "examples"
    for example in "$REPO_ROOT"/examples/[0-9]*.py; do
        "$PYTHON" "$example" --backend "$TEST_BACKEND"
    done
    log "pytest (backend $TEST_BACKEND)"
    "$PYTHON" -m pytest "$REPO_ROOT/tests" -q -rs --backend "$TEST_BACKEND"
}

main() {
    local mode="${1:-build}"
    case "$mode" in
    env) do_env ;;
    configure) do_configure ;;
    build) do_build ;;
    test) do_test ;;
    all) do_env; do_build; do_test ;;
    clean) log "clean $BUILD_DIR"; rm -rf "$BUILD_DIR" ;;
    -h|--help|help) usage ;;
    *) usage >&2; exit 2 ;;
    esac
}
