#!/usr/bin/env bash
# One-command TileLang and CuTe validation on a GPU machine without a package index (the H200):
#   tilelang  extract .whl/tilelang_site.tar.xz (scripts/gpu/fetch_tilelang_wheels.sh made it
#             where PyPI is reachable; carry .whl) to /tmp/site, import it
#   build     the NVIDIA variant with CAMP_ENABLE_CUTE=ON from third_party/cutlass, plus
#             camp_cute_tests/camp_cute_bench. Carry either third_party/cutlass itself (26 MiB) or,
#             to stay under the carry limit next to tilelang_site.tar.xz, .whl/cutlass_headers.tar.xz
#             (about 1 MiB), made here with:
#               python3 scripts/gpu/fetch_cutlass_headers.py third_party/cutlass &&
#               tar -C third_party -cf - cutlass | xz -6 > .whl/cutlass_headers.tar.xz
#   cute      camp_cute_tests (CuTe kernels vs float64 references) and camp_cute_bench
#   pytest    tests/op_tests --backend tilelang (the same suite as the other backends)
#   runops    run_ops --backend tilelang --mode test, then --mode bench on a few shapes, and the
#             same bench on the nvidia backend for the comparison (both against PyTorch)
# Logs go to $OUT (or ./gpu-logs); a summary is printed last.
#   STEPS="tilelang build cute pytest runops" (default: all)
set -uo pipefail
REPO_ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
LOG_DIR="${OUT:-$REPO_ROOT/gpu-logs}"
STEPS="${STEPS:-tilelang build cute pytest runops}"
BUILD_DIR="${BUILD_DIR:-$REPO_ROOT/build-nvidia}"
SITE="${TL_SITE:-/tmp/site}"
export CAMP_BUILD_DIR="$BUILD_DIR" PYTHONPATH="$SITE:$REPO_ROOT/python" PYTHONUNBUFFERED=1
# TileLang's kernel cache: on the local disk, kept between steps of this run.
export TILELANG_CACHE_DIR="${TILELANG_CACHE_DIR:-/tmp/tilelang-cache}"
STEP_TIMEOUT_DEFAULT=400
source "$REPO_ROOT/scripts/gpu/steps.sh"
require_gpu

if has tilelang; then
    step tilelang-extract bash -c "mkdir -p '$SITE' && tar -xJf '$REPO_ROOT/.whl/tilelang_site.tar.xz' -C '$SITE'"
    step tilelang-import python3 -c 'import tilelang, torch; print("tilelang", tilelang.__version__, "torch", torch.__version__, "cuda", torch.cuda.is_available())'
fi
if has build; then
    if [[ ! -f "$REPO_ROOT/third_party/cutlass/include/cute/tensor.hpp" &&
          -f "$REPO_ROOT/.whl/cutlass_headers.tar.xz" ]]; then
        step cutlass-extract bash -c "mkdir -p '$REPO_ROOT/third_party' && tar -xJf '$REPO_ROOT/.whl/cutlass_headers.tar.xz' -C '$REPO_ROOT/third_party'"
    fi
    step build bash -c "CAMP_FORCE_RECONFIGURE=1 CAMP_ENABLE_CUTE=ON bash '$REPO_ROOT/scripts/build_nvidia.sh' configure && cmake --build '$BUILD_DIR' -j 16"
    grep -i "CuTe:" "$LOG_DIR/build.log" | head -2 >>"$LOG_DIR/system.log"
fi
export LD_LIBRARY_PATH="$BUILD_DIR${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
if has cute; then
    step cute-tests "$BUILD_DIR/tests/cpp/nvidia/camp_cute_tests"
    step cute-bench "$BUILD_DIR/tests/cpp/nvidia/camp_cute_bench"
fi
if has pytest; then
    step pytest-tilelang python3 -m pytest "$REPO_ROOT/tests/op_tests" -q -rs --backend tilelang
fi
if has runops; then
    SHAPES=(--shape 1048576 --shape 16777216 --shape 4096x4096 --shape 8192x4096)
    step runops-tl-test python3 "$REPO_ROOT/tests/run_ops.py" --op all --backend tilelang --mode test
    step runops-tl-bench python3 "$REPO_ROOT/tests/run_ops.py" --op all --backend tilelang --mode bench --dtype f32,f16 "${SHAPES[@]}"
    step runops-nv-bench python3 "$REPO_ROOT/tests/run_ops.py" --op all --backend nvidia --mode bench --dtype f32,f16 "${SHAPES[@]}"
fi

echo "== scripts/gpu/tilelang_cute.sh summary (logs in $LOG_DIR)"
cat "$LOG_DIR/system.log"
finish
