#!/usr/bin/env bash
# The CPU variant: libcamp_ops.so with the CPU backend only (what CI tests).
source "$(dirname "${BASH_SOURCE[0]}")/lib/build_common.sh"
VARIANT=cpu
BUILD_DIR="${BUILD_DIR:-$REPO_ROOT/build-cpu}"
TEST_BACKEND="${TEST_BACKEND:-cpu}"
CMAKE_ARGS=(-DCAMP_ENABLE_NVIDIA=OFF -DCAMP_ENABLE_METAX=OFF)
variant_env() { :; }
main "$@"
