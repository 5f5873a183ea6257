#!/usr/bin/env bash
# The launch check: the NVIDIA backend's host code (plans, launchers, workspace
# layouts) run on a machine without a GPU. An NVIDIA build links the library's
# objects against a stand-in CUDA runtime that runs nothing and prints every
# launch (tests/cpp/nvidia/launch_check/), drives every operator through it
# over ~27,000 cases as three stand-in GPUs, and checks every launch as a GPU
# would (limits, shared memory, clusters, cooperative grids) and every pointer
# argument and memset against the case's buffers. The kernels' resources come
# from the fatbins through cuobjdump: the toolkit's, or the
# nvidia-cuda-cuobjdump wheel of the same CUDA major version, fetched once into
# ~/.cache/operator_runtime.
#
# usage: bash scripts/ci/launch_check.sh [BUILD_DIR] [check_launches.py options]
#   BUILD_DIR: an NVIDIA build folder (default build-nvidia; built here first)
#   e.g. --log DIR keeps each stand-in GPU's launch log: two builds' logs diff
#   to the launches a change of host code alters.
set -euo pipefail
REPO_ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
BUILD_DIR="$REPO_ROOT/build-nvidia"
if [[ $# -gt 0 && "$1" != -* ]]; then BUILD_DIR="$1"; shift; fi
PYTHON="${PYTHON:-python3}"
NVCC="${NVCC:-$(command -v nvcc || echo /usr/local/cuda/bin/nvcc)}"
[[ -x "$NVCC" ]] || { echo "ci/launch_check.sh: nvcc not found (set NVCC)" >&2; exit 1; }

find_cuobjdump() {
    local c
    for c in "${CUOBJDUMP:-}" "$(command -v cuobjdump || true)" "$(dirname "$NVCC")/cuobjdump"; do
        [[ -n "$c" && -x "$c" ]] && { echo "$c"; return; }
    done
    local major cache
    major="$("$NVCC" --version | sed -n 's/.*release \([0-9]*\)\..*/\1/p')"
    cache="${XDG_CACHE_HOME:-$HOME/.cache}/operator_runtime/cuobjdump-$major"
    if [[ ! -d "$cache/nvidia" ]]; then
        echo "== fetching cuobjdump (nvidia-cuda-cuobjdump==$major.*) into $cache" >&2
        mkdir -p "$cache"
        if ! "$PYTHON" -m pip download --quiet --no-deps --only-binary=:all: --dest "$cache" \
            "nvidia-cuda-cuobjdump==$major.*" >&2; then
            echo "ci/launch_check.sh: could not fetch nvidia-cuda-cuobjdump; set CUOBJDUMP to a cuobjdump" \
                 "(or CAMP_SKIP_NVIDIA_BUILD=1 for run_tests.sh without the NVIDIA checks)" >&2
            rm -rf "$cache"
            return 1
        fi
        "$PYTHON" -c 'import sys, zipfile, glob; [zipfile.ZipFile(w).extractall(sys.argv[1]) for w in glob.glob(sys.argv[1] + "/*.whl")]' "$cache"
    fi
    c="$(find "$cache/nvidia" -name cuobjdump -type f | head -1)"
    [[ -n "$c" ]] || { echo "ci/launch_check.sh: no cuobjdump in $cache" >&2; return 1; }
    chmod +x "$c"
    echo "$c"
}
CUOBJDUMP="$(find_cuobjdump)"

if [[ ! -f "$BUILD_DIR/CMakeCache.txt" ]]; then
    BUILD_DIR="$BUILD_DIR" bash "$REPO_ROOT/scripts/build_nvidia.sh" configure
fi
echo "== launch check: building camp_launch_cases in $BUILD_DIR"
cmake --build "$BUILD_DIR" --target camp_launch_cases -j"$(nproc 2>/dev/null || echo 2)"
"$PYTHON" "$REPO_ROOT/tests/cpp/nvidia/launch_check/check_launches.py" --build "$BUILD_DIR" \
    --cuobjdump "$CUOBJDUMP" "$@"
