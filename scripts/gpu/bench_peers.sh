#!/usr/bin/env bash
# The GPU benchmark of softmax, reduce_sum, relu, silu, vector_add and copy (there is no matmul
# step) against the GPU peers each operator has in tests/bench/<op>.py: torch eager for all,
# torch.compile for all but copy, Triton for softmax and reduce_sum, QuACK for softmax (reduce_sum
# lists it as n/a: QuACK has no sum kernel). In steps of at most 10 minutes each (for remote
# machines that limit how long a command runs):
#
#   bash scripts/gpu/bench_peers.sh quack build softmax     # one call
#   bash scripts/gpu/bench_peers.sh reduce_sum              # a later call on the same machine
#
# Steps, run in the order given, all within DEADLINE seconds (default 570) from the start (the
# benchmark steps share the time left evenly):
#   quack       scripts/gpu/install_quack.sh b (needs .whl/quack_b.tar.xz, and step a done for both parts in
#               earlier calls on this machine: see scripts/gpu/fetch_quack_wheels.sh)
#   build       build-nvidia for this GPU (no test binaries), unless it already has the library
#   softmax, reduce_sum, relu, silu, vector_add, copy
#               tests/run_ops.py --op OP --backend nvidia --mode bench --dtype $DTYPES with
#               --report (report.md, bandwidth.png, results.json, results.csv) into
#               $OUT_DIR/OP/ and the printed table in $OUT_DIR/OP/bench.log; the records are
#               rewritten after every case, so a step cut short keeps what it measured.
# QuACK is on the path whenever $QUACK_DIR/site holds it. Variables: DTYPES (default
# bf16,f32,f16), OUT_DIR (default $OUT when set, else reports/bench-peers), DEADLINE,
# RUN_OPS_ARGS (more run_ops arguments, e.g. "--shape 8192x4096") and QUACK_DIR (default
# /tmp/quack; the folder install_quack.sh installs into, which reads the same variable).
set -uo pipefail

ROOT=$(cd "$(dirname "$0")/../.." && pwd)
DTYPES=${DTYPES:-bf16,f32,f16}
OUT_DIR=${OUT_DIR:-${OUT:-$ROOT/reports/bench-peers}}
DEADLINE=${DEADLINE:-570}
BUILD_DIR=$ROOT/build-nvidia
QUACK_SITE=${QUACK_DIR:-/tmp/quack}/site
mkdir -p "$OUT_DIR"

left() { echo $((DEADLINE - SECONDS)); }
quack_path() {
    if [ -d "$QUACK_SITE/quack" ]; then
        export PYTHONPATH="$QUACK_SITE:$QUACK_SITE/nvidia_cutlass_dsl/dsl_packages${PYTHONPATH:+:$PYTHONPATH}"
    fi
}

is_op() { case "$1" in softmax | reduce_sum | relu | silu | vector_add | copy) return 0 ;; esac; return 1; }
ops_left=0
for step in "$@"; do is_op "$step" && ops_left=$((ops_left + 1)); done

status=0
quack_path
for step in "$@"; do
    if [ "$(left)" -le 10 ]; then
        echo "bench_peers: no time left for $step (DEADLINE $DEADLINE s)"
        status=1
        continue
    fi
    echo "== $step ($(left) s left)"
    case "$step" in
    quack)
        bash "$ROOT/scripts/gpu/install_quack.sh" b || status=1
        quack_path
        ;;
    build)
        if [ -f "$BUILD_DIR/libcamp_ops.so" ]; then
            echo "bench_peers: $BUILD_DIR/libcamp_ops.so is there; not rebuilt"
        else
            if ! { timeout "$(left)" cmake -S "$ROOT" -B "$BUILD_DIR" -DCMAKE_BUILD_TYPE=Release \
                       -DCAMP_ENABLE_NVIDIA=ON -DCAMP_BUILD_TESTS=OFF \
                       -DCMAKE_CUDA_ARCHITECTURES=native > "$OUT_DIR/build.log" 2>&1 &&
                   timeout "$(left)" cmake --build "$BUILD_DIR" -j "$(nproc)" \
                       >> "$OUT_DIR/build.log" 2>&1; }; then
                status=1
                tail -20 "$OUT_DIR/build.log"
            fi
        fi
        ;;
    softmax | reduce_sum | relu | silu | vector_add | copy)
        mkdir -p "$OUT_DIR/$step"
        share=$(( $(left) / ops_left ))
        ops_left=$((ops_left - 1))
        # shellcheck disable=SC2086
        CAMP_BUILD_DIR=$BUILD_DIR timeout "$share" python3 "$ROOT/tests/run_ops.py" \
            --op "$step" --backend nvidia --mode bench --dtype "$DTYPES" \
            --report "$OUT_DIR/$step" ${RUN_OPS_ARGS:-} 2>&1 | tee "$OUT_DIR/$step/bench.log" \
            | grep -v '^ \{20,\}hot' | cut -c1-200
        [ "${PIPESTATUS[0]}" -eq 0 ] || status=1
        ;;
    *)
        echo "bench_peers: unknown step $step" >&2
        status=2
        ;;
    esac
done
echo "bench_peers: done in $SECONDS s (status $status); records under $OUT_DIR"
exit $status
