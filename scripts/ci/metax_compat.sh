#!/usr/bin/env bash
# Portability check of the MetaX backend without MACA: compiles every MetaX
# translation unit (ops/*/metax/*.maca, runtime/metax/*.maca) with nvcc in a
# compatibility mode. The MetaX device traits are used with the MACA names
# mapped onto CUDA (device_traits_metax_compat.cuh): 64-lane warps, 64-bit lane
# masks, no clusters, and CUDA-only names poisoned after the traits. A kernel
# that assumes 32 lanes where the traits say otherwise, or launch code that
# calls a CUDA-only API outside the traits, fails here. Compile only (-c):
# nothing is linked or run. Exits non-zero on the first error.
set -euo pipefail

REPO_ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
NVCC="${NVCC:-$(command -v nvcc || echo /usr/local/cuda/bin/nvcc)}"
ARCH="${CAMP_METAX_COMPAT_ARCH:-sm_90}"
OUT_DIR="$(mktemp -d)"
trap 'rm -rf "$OUT_DIR"' EXIT

[[ -x "$NVCC" ]] || { echo "ci/metax_compat.sh: nvcc not found (set NVCC)" >&2; exit 1; }

mapfile -t UNITS < <(cd "$REPO_ROOT" && find ops runtime -path '*/metax/*' -name '*.maca' | sort)
[[ ${#UNITS[@]} -gt 0 ]] || { echo "ci/metax_compat.sh: no MetaX units found" >&2; exit 1; }

echo "== MetaX compatibility check: ${#UNITS[@]} units with $("$NVCC" --version | tail -1)"
failed=0
for unit in "${UNITS[@]}"; do
    obj="$OUT_DIR/$(echo "$unit" | tr '/' '_').o"
    if "$NVCC" -x cu -std=c++17 -arch="$ARCH" -c "$REPO_ROOT/$unit" -o "$obj" \
        -I"$REPO_ROOT/include" -I"$REPO_ROOT" \
        -DOPRT_WITH_METAX -DOPRT_METAX_COMPAT_NVCC=1 -DOPRT_DEVICE_WARP_SIZE=64 \
        '-DOPRT_DEVICE_TRAITS_HEADER="runtime/gpu/device_traits_metax.cuh"' \
        --expt-relaxed-constexpr -Werror all-warnings -Xcompiler=-Wall,-Wextra,-fPIC; then
        echo "ok   $unit"
    else
        echo "FAIL $unit" >&2
        failed=1
    fi
done
if [[ $failed -ne 0 ]]; then
    echo "ci/metax_compat.sh: some MetaX units do not compile with 64-lane traits" >&2
    exit 1
fi
echo "ci/metax_compat.sh: all MetaX units compile with 64-lane MetaX traits (nvcc compatibility mode; not mxcc)"
