#!/usr/bin/env bash
# The MetaX variant: MACA backend plus the CPU backend (MACA toolkit under
# MACA_PATH, default /opt/maca). See docs/metax.md.
#
# CAMP_USE_TILELANG_METAX=1 with CAMP_TILELANG_SOURCE_ROOT=<TileLang checkout
# built from source for MACA>: exports PYTHONPATH and LD_LIBRARY_PATH for that
# TileLang and, in `test`, also runs the TileLang tests on MetaX.
source "$(dirname "${BASH_SOURCE[0]}")/lib/build_common.sh"
VARIANT=metax
BUILD_DIR="${BUILD_DIR:-$REPO_ROOT/build-metax}"
TEST_BACKEND="${TEST_BACKEND:-metax}"
export MACA_PATH="${MACA_PATH:-/opt/maca}"
CMAKE_ARGS=(-DCAMP_ENABLE_METAX=ON -DCAMP_ENABLE_NVIDIA=OFF "-DMACA_PATH=$MACA_PATH")
[[ -n "${CAMP_MXCC_FLAGS:-}" ]] && CMAKE_ARGS+=("-DCAMP_MXCC_FLAGS=$CAMP_MXCC_FLAGS")
# The TileLang backend runs the operator suite (tests/op_tests --backend tilelang); its
# kernels compile for OPRT_TILELANG_TARGET (default cuda: set the MetaX TileLang's target).
TILELANG_TESTS="${CAMP_TILELANG_TESTS:-$REPO_ROOT/tests/op_tests}"

tilelang_setup() {
    [[ "${CAMP_USE_TILELANG_METAX:-0}" == 1 ]] || return 0
    local root="${CAMP_TILELANG_SOURCE_ROOT:-}"
    if [[ -z "$root" || ! -d "$root" ]]; then
        echo "CAMP_USE_TILELANG_METAX=1 needs CAMP_TILELANG_SOURCE_ROOT=<TileLang source checkout> (got '${root}')" >&2
        exit 1
    fi
    export PYTHONPATH="$root${PYTHONPATH:+:$PYTHONPATH}"
    local libdirs="$root/build/lib:$root/build:$root/build/tvm"
    export LD_LIBRARY_PATH="$libdirs:$MACA_PATH/lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
    echo "TileLang from $root (PYTHONPATH, LD_LIBRARY_PATH exported)"
}

variant_env() {
    echo "MACA_PATH=$MACA_PATH"
    [[ -x "$MACA_PATH/mxgpu_llvm/bin/mxcc" || -x "$MACA_PATH/bin/mxcc" ]] ||
        echo "mxcc not found under $MACA_PATH: configure will stop" >&2
    tilelang_setup
    if [[ "${CAMP_USE_TILELANG_METAX:-0}" == 1 ]]; then
        "$PYTHON" -c 'import tilelang; print("tilelang", getattr(tilelang, "__version__", "?"))' ||
            echo "tilelang does not import from CAMP_TILELANG_SOURCE_ROOT" >&2
    fi
}

# After the common test steps: the TileLang tests on MetaX, when asked for.
do_tilelang_test() {
    [[ "${CAMP_USE_TILELANG_METAX:-0}" == 1 ]] || return 0
    tilelang_setup
    log "TileLang tests on MetaX"
    if [[ ! -d "$TILELANG_TESTS" ]]; then
        echo "CAMP_TILELANG_TESTS=$TILELANG_TESTS is not a folder" >&2
        exit 1
    fi
    "$PYTHON" -m pytest "$TILELANG_TESTS" -q -rs --backend tilelang
}

mode="${1:-build}"
case "$mode" in
test) main test; do_tilelang_test ;;
all) main all; do_tilelang_test ;;
*) main "$@" ;;
esac
