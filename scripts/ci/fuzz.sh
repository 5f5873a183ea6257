#!/usr/bin/env bash
# Builds the libFuzzer targets of tests/fuzz (Clang, ASan + UBSan, CPU variant)
# in their own build folder and runs each for a bounded time, starting from the
# seed corpus in tests/fuzz/corpus/<target>/. Fails on any finding: a crash, a
# sanitizer report, a wrong result, a leak or a timeout. The reproducer lands in
# $FUZZ_BUILD_DIR/artifacts/ (replay: <target binary> <file>; add
# OPRT_FUZZ_TRACE=1 to print every call).
#
# Variables: FUZZ_BUILD_DIR (default build-fuzz), FUZZ_SECONDS (total budget,
# default 60, split across the targets), FUZZ_JOBS (build jobs).
set -euo pipefail
REPO_ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
BUILD_DIR="${FUZZ_BUILD_DIR:-$REPO_ROOT/build-fuzz}"
TOTAL_SECONDS="${FUZZ_SECONDS:-60}"
JOBS="${FUZZ_JOBS:-$(nproc 2>/dev/null || echo 2)}"
CXX_FUZZ="${CXX_FUZZ:-clang++}"
CC_FUZZ="${CC_FUZZ:-clang}"

log() { printf '\n== %s\n' "$*"; }

# A program libFuzzer can link: else install Clang's runtime
# libraries (Debian/Ubuntu package names; the version follows clang's).
have_libfuzzer() {
    command -v "$CXX_FUZZ" >/dev/null 2>&1 || return 1
    local dir
    dir="$(mktemp -d)"
    printf '#include <cstddef>\n#include <cstdint>\nextern "C" int LLVMFuzzerTestOneInput(const uint8_t *, size_t) { return 0; }\n' > "$dir/t.cc"
    "$CXX_FUZZ" -fsanitize=fuzzer,address,undefined "$dir/t.cc" -o "$dir/t" >/dev/null 2>&1
    local ok=$?
    rm -rf "$dir"
    return $ok
}

if ! have_libfuzzer; then
    log "installing clang and libFuzzer"
    if ! command -v apt-get >/dev/null 2>&1; then
        echo "ci/fuzz.sh: $CXX_FUZZ with libFuzzer is needed (apt: clang libclang-rt-dev)" >&2
        exit 1
    fi
    SUDO=""
    [[ "$(id -u)" != 0 ]] && SUDO="sudo"
    $SUDO apt-get update -qq
    $SUDO apt-get install -y -qq clang >/dev/null
    major="$(clang --version | sed -n 's/.*clang version \([0-9]*\).*/\1/p' | head -1)"
    # libclang-rt-<N>-dev holds libclang_rt.fuzzer (Debian 12 / Ubuntu 22.04+).
    $SUDO apt-get install -y -qq "libclang-rt-${major}-dev" >/dev/null 2>&1 ||
        $SUDO apt-get install -y -qq libclang-rt-dev >/dev/null 2>&1 || true
    have_libfuzzer || { echo "ci/fuzz.sh: libFuzzer still cannot link with $CXX_FUZZ" >&2; exit 1; }
fi
"$CXX_FUZZ" --version | head -1

log "build $BUILD_DIR"
cmake -S "$REPO_ROOT" -B "$BUILD_DIR" -DCMAKE_BUILD_TYPE=RelWithDebInfo \
    -DCMAKE_CXX_COMPILER="$CXX_FUZZ" -DCMAKE_C_COMPILER="$CC_FUZZ" \
    -DCAMP_SANITIZE=address,undefined -DCAMP_BUILD_FUZZERS=ON -DCAMP_BUILD_TESTS=OFF \
    -DCAMP_ENABLE_NVIDIA=OFF -DCAMP_ENABLE_METAX=OFF >/dev/null
cmake --build "$BUILD_DIR" -j "$JOBS"

targets=()
for source in "$REPO_ROOT"/tests/fuzz/fuzz_*.cc; do
    targets+=("$(basename "$source" .cc)")
done
per_target=$(( TOTAL_SECONDS / ${#targets[@]} ))
(( per_target >= 5 )) || per_target=5

export ASAN_OPTIONS="${ASAN_OPTIONS:-detect_leaks=1:abort_on_error=1:allocator_may_return_null=1}"
export UBSAN_OPTIONS="${UBSAN_OPTIONS:-halt_on_error=1:print_stacktrace=1}"
export OMP_NUM_THREADS="${OMP_NUM_THREADS:-2}"
mkdir -p "$BUILD_DIR/artifacts"
failed=()
for target in "${targets[@]}"; do
    seeds="$REPO_ROOT/tests/fuzz/corpus/$target"
    work="$BUILD_DIR/corpus/$target"  # grows run after run; the repository's seeds stay as they are
    mkdir -p "$work"
    log "$target: ${per_target}s from $(ls "$seeds" 2>/dev/null | wc -l) seeds"
    if "$BUILD_DIR/fuzz/$target" "$work" "$seeds" -max_total_time="$per_target" -timeout=20 \
        -rss_limit_mb=4096 -max_len=512 -print_final_stats=1 \
        -artifact_prefix="$BUILD_DIR/artifacts/$target-" 2> "$BUILD_DIR/$target.log"; then
        grep -E '^(stat::number_of_executed_units|stat::average_exec_per_sec|stat::new_units_added|#[0-9]+.*DONE)' \
            "$BUILD_DIR/$target.log" || true
    else
        grep -v -E '^#[0-9]+\s+(NEW|REDUCE|pulse|RELOAD)' "$BUILD_DIR/$target.log" | tail -60
        failed+=("$target")
    fi
done

if (( ${#failed[@]} )); then
    echo "ci/fuzz.sh: FINDINGS in ${failed[*]} (reproducers: $BUILD_DIR/artifacts/)" >&2
    exit 1
fi
echo "ci/fuzz.sh: ${#targets[@]} targets, ${per_target}s each, no findings"
