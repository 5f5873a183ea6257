#!/usr/bin/env bash
# Times two builds of the library against each other: tests/run_ops.py --mode bench once per
# build and round, the order alternating (A B, then B A, ...) so that a GPU's clocks and its
# neighbours weigh on both alike, then tests/compare_bench.py over every record:
#
#   bash scripts/perf/ab_bench.sh BUILD_A BUILD_B [--rounds N] -- RUN_OPS_ARGS...
#   bash scripts/perf/ab_bench.sh build-base build-nvidia -- --op softmax --backend nvidia \
#       --dtype f32 --shape 784x3840,144x4096
#
# BUILD_A and BUILD_B are folders holding a libcamp_ops.so (each run's CAMP_BUILD_DIR): build the
# library before a change, copy the .so aside, change and rebuild. RUN_OPS_ARGS go to run_ops.py
# after `--mode bench --peers none` (give --peers to time peers in every run too). N rounds
# (default 2) of both builds; the records are OUT_DIR/a_R.json and b_R.json (OUT_DIR: default
# reports/ab). The comparison sets every record against A's first: A's other rounds show how far
# one run moves from another, B's rounds the change.
set -euo pipefail

ROOT=$(cd "$(dirname "$0")/../.." && pwd)
usage() {
    echo "usage: $0 BUILD_A BUILD_B [--rounds N] -- RUN_OPS_ARGS..." >&2
    exit 2
}
[ $# -ge 3 ] || usage
A=$1 B=$2
shift 2
ROUNDS=2
while [ $# -gt 0 ] && [ "$1" != "--" ]; do
    case "$1" in
    --rounds) ROUNDS=${2:?--rounds takes a number}; shift 2 ;;
    *) usage ;;
    esac
done
[ "${1:-}" = "--" ] || usage
shift
for dir in "$A" "$B"; do
    [ -f "$dir/libcamp_ops.so" ] || { echo "ab_bench: $dir holds no libcamp_ops.so" >&2; exit 2; }
done
OUT_DIR=${OUT_DIR:-$ROOT/reports/ab}
mkdir -p "$OUT_DIR"

records=()
for ((r = 1; r <= ROUNDS; r++)); do
    order="a b"
    ((r % 2 == 0)) && order="b a"
    for side in $order; do
        dir=$A
        [ "$side" = b ] && dir=$B
        echo "ab_bench: round $r, build $side ($dir)"
        CAMP_BUILD_DIR=$dir python3 "$ROOT/tests/run_ops.py" --mode bench --peers none "$@" \
            --json "$OUT_DIR/${side}_$r.json" >"$OUT_DIR/${side}_$r.log" 2>&1 ||
            { echo "ab_bench: the run failed; its log: $OUT_DIR/${side}_$r.log" >&2; tail -5 "$OUT_DIR/${side}_$r.log" >&2; exit 1; }
    done
done
for side in a b; do
    for ((r = 1; r <= ROUNDS; r++)); do records+=("$OUT_DIR/${side}_$r.json"); done
done
python3 "$ROOT/tests/compare_bench.py" "${records[@]}"
