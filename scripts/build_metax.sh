#!/usr/bin/env bash
# The MetaX variant: MACA backend plus the CPU backend (MACA toolkit under
# MACA_PATH, default /opt/maca).
source "$(dirname "${BASH_SOURCE[0]}")/_common.sh"
VARIANT=metax
BUILD_DIR="${BUILD_DIR:-$REPO_ROOT/build-metax}"
TEST_BACKEND="${TEST_BACKEND:-metax}"
export MACA_PATH="${MACA_PATH:-/opt/maca}"
CMAKE_ARGS=(-DCAMP_ENABLE_METAX=ON -DCAMP_ENABLE_NVIDIA=OFF)
variant_env() {
    echo "MACA_PATH=$MACA_PATH"
    [[ -x "$MACA_PATH/mxgpu_llvm/bin/mxcc" || -x "$MACA_PATH/bin/mxcc" ]] ||
        echo "mxcc not found under $MACA_PATH: configure will stop" >&2
}
main "$@"
