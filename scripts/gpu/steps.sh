# Sourced by the one-call GPU scripts (scripts/gpu/validate.sh, scripts/gpu/tilelang_cute.sh): named
# steps with a time limit, one log each under $LOG_DIR, a summary line each in SUMMARY,
# the names of the steps that failed in FAILED, and the machine's description in
# $LOG_DIR/system.log. The caller sets LOG_DIR, STEPS and STEP_TIMEOUT_DEFAULT (seconds;
# STEP_TIMEOUT overrides it), and ends with finish.
mkdir -p "$LOG_DIR"
SUMMARY=()
FAILED=()

step() {  # step NAME COMMAND...: runs (at most STEP_TIMEOUT s), logs to $LOG_DIR/NAME.log
    local name="$1"; shift
    local start=$SECONDS
    timeout "${STEP_TIMEOUT:-$STEP_TIMEOUT_DEFAULT}" "$@" >"$LOG_DIR/$name.log" 2>&1
    local rc=$?
    local last
    last="$(grep -v '^\s*$' "$LOG_DIR/$name.log" | tail -1 | cut -c1-160)"
    SUMMARY+=("$(printf '%-14s rc=%-3s %4ss  %s' "$name" "$rc" "$((SECONDS - start))" "$last")")
    ((rc == 0)) || FAILED+=("$name")
    return $rc
}
has() { [[ " $STEPS " == *" $1 "* ]]; }

# The same in the background, for steps that may share the machine (none of them times
# anything): collect_bg waits for them and adds their summary lines in the order they started.
BG_NAMES=()
step_bg() {  # step_bg NAME COMMAND...
    BG_NAMES+=("$1")
    ( SUMMARY=(); step "$@"; echo $? >"$LOG_DIR/$1.rc"; printf '%s\n' "${SUMMARY[@]}" >"$LOG_DIR/$1.sum" ) &
}
collect_bg() {
    wait
    local name
    for name in "${BG_NAMES[@]}"; do
        SUMMARY+=("$(cat "$LOG_DIR/$name.sum")")
        [[ "$(cat "$LOG_DIR/$name.rc")" == 0 ]] || FAILED+=("$name")
        rm -f "$LOG_DIR/$name.sum" "$LOG_DIR/$name.rc"
    done
    BG_NAMES=()
}

# The summary, last: every step's line, then which failed; the exit status is 1 when any did.
finish() {
    printf '%s\n' "${SUMMARY[@]}" | tee "$LOG_DIR/summary.log"
    if ((${#FAILED[@]})); then
        echo "failed: ${FAILED[*]} (logs in $LOG_DIR)"
        exit 1
    fi
    echo "no step failed (logs in $LOG_DIR)"
}

source "$(dirname "${BASH_SOURCE[0]}")/../lib/gpu_visible.sh"

# The steps past a build need a GPU: without one, say so and stop before running them.
require_gpu() {
    if ! gpu_visible; then
        echo "$(basename "$0"): no NVIDIA GPU visible here (nvidia-smi -L lists none): its test, benchmark" \
             "and sanitizer steps need one. Without a GPU, bash scripts/run_tests.sh runs the suite" \
             "(the GPU tests skip there with their reason)." >&2
        exit 2
    fi
}

{
    date -u
    nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv,noheader
    nvcc --version | tail -1
    python3 -c 'import torch, numpy; print("torch", torch.__version__, "numpy", numpy.__version__)'
} >"$LOG_DIR/system.log" 2>&1
