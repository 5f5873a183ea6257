#!/usr/bin/env bash
# One-command validation on a GPU machine (run on an H200): build the NVIDIA
# variant; run the C++ suites camp_cpp_tests and camp_nvidia_tests (the "ctest" step runs
# the two binaries directly, not ctest, so camp_cute_tests is not run here:
# scripts/gpu/tilelang_cute.sh runs it), pytest over tests/, run_ops and the examples on
# the nvidia backend; compute-sanitizer's four tools over camp_nvidia_tests; and the
# large-tensor check (camp_nvidia_tests' *Large* tests with CAMP_LARGE_TESTS=1). Logs go
# to $OUT (or ./gpu-logs); a short summary is printed last, and the exit status
# is 1 when a step failed (2, before any step, when no GPU is visible).
#   STEPS="build ctest pytest pytest-last runops examples sanitize sanitize-py large"
#   (default: all). pytest-last puts the tensors on the last GPU (several GPUs);
#   sanitize runs memcheck, racecheck, initcheck and synccheck over the camp_nvidia_tests
#   that SANITIZE_FILTER selects (default '*-*Large*': all but the large-tensor tests;
#   synccheck also leaves out *ClusterNonPortable*);
#   sanitize-py runs the four sanitizers (SANITIZE_PY_TOOLS) over the Python edge-data tests,
#   checking this project's kernels only (torch's are excluded).
# PARALLEL=1 runs the test steps (ctest to examples, and large) side by side on the one GPU, then
# the sanitizer steps side by side: the longest step sets the time (on an H200, 2026-12-05: the
# C++ GPU suite, 261 s, with pytest 232 s beside it; with a SANITIZE_FILTER of the 40 softmax,
# reduce_sum and plan-path tests, not the default, memcheck, synccheck and initcheck over the
# 40 in under 250 s each with racecheck beside them, which reached 27 of the 40 by then). The
# GPU's memory must hold them all at once (the large-tensor test alone takes about 18 GB).
set -uo pipefail
REPO_ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
LOG_DIR="${OUT:-$REPO_ROOT/gpu-logs}"
STEPS="${STEPS:-build ctest pytest pytest-last runops examples sanitize sanitize-py large}"  # drop build to use a carried BUILD_DIR
BUILD_DIR="${BUILD_DIR:-$REPO_ROOT/build-nvidia}"
export CAMP_BUILD_DIR="$BUILD_DIR" PYTHONPATH="$REPO_ROOT/python" PYTHONUNBUFFERED=1
STEP_TIMEOUT_DEFAULT=1800  # a guard against hangs only: the GPU suite alone runs about 5 minutes on an H200, a sanitizer over it longer
source "$REPO_ROOT/scripts/gpu/steps.sh"
[[ "$STEPS" == build ]] || require_gpu
SUMMARY+=("system     $(sed -n 2p "$LOG_DIR/system.log")")

has build && step build bash "$REPO_ROOT/scripts/build_nvidia.sh" build
# The test binaries are run directly (not through ctest) so a build folder made
# on another machine, whose CTest files name its paths, works here too.
export LD_LIBRARY_PATH="$BUILD_DIR${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
GPU_TESTS="$BUILD_DIR/tests/cpp/nvidia/camp_nvidia_tests"
test_step() { if [[ "${PARALLEL:-0}" == 1 ]]; then step_bg "$@"; else step "$@"; fi; }
has ctest && test_step cpp-tests "$BUILD_DIR/tests/cpp/camp_cpp_tests"
has ctest && test_step gpu-tests "$GPU_TESTS"
has pytest && test_step pytest python3 -m pytest "$REPO_ROOT/tests" -q -rs --backend nvidia
has pytest-last && test_step pytest-last python3 -m pytest "$REPO_ROOT/tests" -q -rs --backend nvidia --gpu last
has runops && test_step runops python3 "$REPO_ROOT/tests/run_ops.py" --op all --backend nvidia --mode "${RUNOPS_MODE:-all}"
has examples && test_step examples bash -c "for e in '$REPO_ROOT'/examples/[0-9]*.py; do python3 \"\$e\" --backend nvidia || exit 1; done"
has large && test_step large env CAMP_LARGE_TESTS=1 "$GPU_TESTS" --gtest_filter='*Large*'
collect_bg
if has sanitize; then
    # synccheck leaves out the softmax test of clusters of 9-16 blocks: the tool stops clusters of
    # more than 8 blocks where two blocks share an SM, correct code or not (bench/cluster_synccheck.cu).
    filter="${SANITIZE_FILTER:-*-*Large*}"
    [[ $filter == *-* ]] && sync_filter="$filter:*ClusterNonPortable*" || sync_filter="$filter-*ClusterNonPortable*"
    for tool in memcheck racecheck initcheck synccheck; do
        test_step "san-$tool" compute-sanitizer --tool "$tool" --error-exitcode 9 "$GPU_TESTS" \
            --gtest_filter="$([[ $tool == synccheck ]] && echo "$sync_filter" || echo "$filter")"
    done
fi
if has sanitize-py; then
    for tool in ${SANITIZE_PY_TOOLS:-memcheck racecheck initcheck synccheck}; do
        test_step "san-py-$tool" compute-sanitizer --tool "$tool" --error-exitcode 9 --kernel-name kns=oprt $([[ $tool == initcheck ]] && echo --check-api-memory-access no) \
            python3 -m pytest "$REPO_ROOT/tests/op_tests/test_edge_data.py" -q -x --backend nvidia
    done
fi
collect_bg

printf '\n===== summary =====\n'
finish
