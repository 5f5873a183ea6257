#!/usr/bin/env bash
# The whole test suite, as CI runs it on a machine without a GPU: installs GoogleTest
# and the Python requirements, builds the CPU variant and runs its tests (ctest,
# run_ops, examples, pytest: pytest's summary line comes last). Where nvcc
# exists the NVIDIA variant is compiled and linked too (its GPU tests run with
# `bash scripts/build_nvidia.sh test` on a GPU machine; here they skip), and its
# host code runs in the launch check (scripts/ci/launch_check.sh).
set -euo pipefail
REPO_ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
PYTHON="${PYTHON:-python3}"
bash "$REPO_ROOT/scripts/build_cpu.sh" env  # tools, GoogleTest, Python requirements
if command -v nvcc >/dev/null 2>&1 && [[ "${CAMP_SKIP_NVIDIA_BUILD:-0}" != 1 ]]; then
    bash "$REPO_ROOT/scripts/build_nvidia.sh" build
    source "$REPO_ROOT/scripts/lib/build_common.sh"  # run_ctest
    run_ctest "${NVIDIA_BUILD_DIR:-$REPO_ROOT/build-nvidia}"
    # The NVIDIA host code (plans, launchers) run against a stand-in CUDA runtime.
    bash "$REPO_ROOT/scripts/ci/launch_check.sh" "${NVIDIA_BUILD_DIR:-$REPO_ROOT/build-nvidia}"
fi
bash "$REPO_ROOT/scripts/build_cpu.sh" build
bash "$REPO_ROOT/scripts/build_cpu.sh" test
