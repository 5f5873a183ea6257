#!/usr/bin/env bash
# The NVIDIA variant: CUDA backend plus the CPU backend. Without a visible GPU
# it still compiles and links (for sm_90 by default), and GPU tests skip.
source "$(dirname "${BASH_SOURCE[0]}")/lib/build_common.sh"
VARIANT=nvidia
BUILD_DIR="${BUILD_DIR:-$REPO_ROOT/build-nvidia}"
if [[ -z "${CMAKE_CUDA_ARCHITECTURES:-}" ]]; then
    if gpu_visible; then CMAKE_CUDA_ARCHITECTURES=native; else CMAKE_CUDA_ARCHITECTURES=90; fi
fi
if [[ -z "${TEST_BACKEND:-}" ]]; then
    if gpu_visible; then TEST_BACKEND=nvidia; else TEST_BACKEND=cpu; fi
fi
CMAKE_ARGS=(-DCAMP_ENABLE_NVIDIA=ON -DCAMP_ENABLE_METAX=OFF
            -DCMAKE_CUDA_ARCHITECTURES="$CMAKE_CUDA_ARCHITECTURES"
            -DCAMP_ENABLE_CUTE="${CAMP_ENABLE_CUTE:-AUTO}")
[[ -n "${CAMP_CUTLASS_ROOT:-}" ]] && CMAKE_ARGS+=(-DCAMP_CUTLASS_ROOT="$CAMP_CUTLASS_ROOT")
variant_env() {
    command -v nvcc >/dev/null || { echo "nvcc not found: install the CUDA toolkit or put it on PATH" >&2; exit 1; }
    nvcc --version | tail -1
    echo "CMAKE_CUDA_ARCHITECTURES=$CMAKE_CUDA_ARCHITECTURES"
    if gpu_visible; then nvidia-smi -L; else echo "no GPU visible: GPU tests will skip"; fi
}
main "$@"
