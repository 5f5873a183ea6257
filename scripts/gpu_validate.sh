#!/usr/bin/env bash
# One-call validation on a GPU machine (the H200 of issue 3): build the NVIDIA
# variant, run ctest, pytest, run_ops and the examples on the nvidia backend,
# compute-sanitizer over the GPU op tests, and the large-tensor check. Logs go
# to $OUT (or ./gpu-logs); a short summary is printed last.
#   STEPS="build ctest pytest runops examples sanitize large" (default: all)
set -uo pipefail
REPO_ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
LOG_DIR="${OUT:-$REPO_ROOT/gpu-logs}"
mkdir -p "$LOG_DIR"
STEPS="${STEPS:-build ctest pytest runops examples sanitize large}"
BUILD_DIR="${BUILD_DIR:-$REPO_ROOT/build-nvidia}"
export CAMP_BUILD_DIR="$BUILD_DIR" PYTHONPATH="$REPO_ROOT/python" PYTHONUNBUFFERED=1
SUMMARY=()

step() {  # step NAME COMMAND...: runs, logs to $LOG_DIR/NAME.log, records the last line
    local name="$1"; shift
    local start=$SECONDS
    "$@" >"$LOG_DIR/$name.log" 2>&1
    local rc=$?
    local last
    last="$(grep -v '^\s*$' "$LOG_DIR/$name.log" | tail -1 | cut -c1-150)"
    SUMMARY+=("$(printf '%-10s rc=%-3s %4ss  %s' "$name" "$rc" "$((SECONDS - start))" "$last")")
    return $rc
}
has() { [[ " $STEPS " == *" $1 "* ]]; }

{
    date -u
    nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv,noheader
    nvcc --version | tail -1
    python3 -c 'import torch, numpy; print("torch", torch.__version__, "numpy", numpy.__version__)'
} >"$LOG_DIR/system.log" 2>&1
SUMMARY+=("system     $(sed -n 2p "$LOG_DIR/system.log")")

has build && step build bash "$REPO_ROOT/scripts/build_nvidia.sh" build
has ctest && step ctest bash -c "cd '$BUILD_DIR' && ctest --output-on-failure -j4"
has pytest && step pytest python3 -m pytest "$REPO_ROOT/tests" -q -rs --backend nvidia
has runops && step runops python3 "$REPO_ROOT/tests/run_ops.py" --op all --backend nvidia --mode all
has examples && step examples bash -c "for e in '$REPO_ROOT'/examples/[0-9]*.py; do python3 \"\$e\" --backend nvidia || exit 1; done"
if has sanitize; then
    gpu_tests="$(find "$BUILD_DIR" -name 'camp_nvidia_tests' -type f | head -1)"
    for tool in memcheck racecheck initcheck synccheck; do
        step "san-$tool" compute-sanitizer --tool "$tool" --error-exitcode 9 "$gpu_tests" \
            --gtest_filter="${SANITIZE_FILTER:-*-*Large*}"
    done
fi
has large && step large env CAMP_LARGE_TESTS=1 "$(find "$BUILD_DIR" -name 'camp_nvidia_tests' -type f | head -1)" --gtest_filter='*Large*'

printf '\n===== summary =====\n'
printf '%s\n' "${SUMMARY[@]}"
