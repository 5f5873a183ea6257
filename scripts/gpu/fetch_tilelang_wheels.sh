#!/usr/bin/env bash
# Brings TileLang to a machine without a package index (the H200 machine): downloads tilelang
# and the dependencies that machine lacks (it has python 3.12, torch, numpy, ml_dtypes, nvcc
# and g++), pinned exactly, unpacks them into one site-packages folder, deletes what the CUDA
# target never uses, and packs that folder as .whl/tilelang_site.tar.xz.
#
#   bash scripts/gpu/fetch_tilelang_wheels.sh            # here, with PyPI: writes .whl/ (git-ignored)
#   # on the device:
#   mkdir -p /tmp/site && tar -xJf .whl/tilelang_site.tar.xz -C /tmp/site
#   PYTHONPATH=/tmp/site:python python3 -m pytest tests/op_tests -q --backend tilelang
#
# The pins follow tilelang 0.1.15's Requires-Dist (apache-tvm-ffi >=0.1.11,<0.1.13;
# z3-solver >=4.13,<4.15.5; torch-c-dlpack-ext; cloudpickle; psutil; tqdm; typing-extensions, which
# torch brings).
# Change them together when tilelang is bumped.
set -euo pipefail

ROOT=$(cd "$(dirname "$0")/../.." && pwd)
WHL=${WHL_DIR:-$ROOT/.whl}
PYVER=${TL_PYTHON_VERSION:-3.12}
PACKAGES=(
    tilelang==0.1.15
    apache-tvm-ffi==0.1.12
    z3-solver==4.15.4.0
    torch-c-dlpack-ext==0.1.5
    cloudpickle==3.1.3
    psutil==7.2.2
    tqdm==4.70.1
)

mkdir -p "$WHL"
for spec in "${PACKAGES[@]}"; do
    python3 -m pip download --quiet --no-deps --only-binary=:all: \
        --python-version "$PYVER" --implementation cp \
        --platform manylinux_2_28_x86_64 --platform manylinux_2_27_x86_64 \
        --platform manylinux_2_17_x86_64 --platform manylinux2014_x86_64 \
        --platform manylinux1_x86_64 -d "$WHL" "$spec"
done

SITE=$(mktemp -d)
trap 'rm -rf "$SITE"' EXIT
for spec in "${PACKAGES[@]}"; do
    name=${spec%%==*}; version=${spec#*==}
    pattern="$(echo "$name" | tr '-' '_')-${version}-*.whl"
    # shellcheck disable=SC2206
    found=( $WHL/$pattern )
    [ -f "${found[0]}" ] || { echo "fetch_tilelang_wheels: no wheel $pattern in $WHL" >&2; exit 1; }
    python3 -m zipfile -e "${found[0]}" "$SITE"
done
before=$(du -sm "$SITE" | cut -f1)

# What the CUDA target never reads: other targets' runtime templates, the C++ sources the
# libraries were built from, CUTLASS's tools, z3's headers, tests and docs. The stub libraries
# of other targets stay (libtilelang.so links against them), as do the Python packages of
# other targets (small, and imported by tilelang's own modules).
TL=$SITE/tilelang
# z3_solver-*.data holds z3's command-line binary.
rm -rf "$TL/3rdparty/tvm/src" "$TL/3rdparty/cutlass/tools" "$SITE/z3/include" \
       "$SITE"/z3_solver-*.data "$SITE/tvm_ffi/cmake" "$SITE/tvm_ffi/share"
find "$TL/src" -mindepth 1 -maxdepth 1 ! -name tl_templates -exec rm -rf {} +
find "$TL/src/tl_templates" -mindepth 1 -maxdepth 1 ! -name cuda ! -name cpp -exec rm -rf {} +
find "$SITE" -depth \( -name tests -o -name test -o -name examples -o -name docs \
     -o -name __pycache__ \) -type d -exec rm -rf {} +
find "$SITE" \( -name '*.a' -o -name '*.pyc' -o -name '*.pyi' \) -delete
# Most wheels ship stripped libraries; strip the rest (z3's is the big one).
find "$SITE" -name '*.so*' -type f -exec strip --strip-unneeded {} + 2>/dev/null || true

after=$(du -sm "$SITE" | cut -f1)
OUTFILE=$WHL/tilelang_site.tar.xz
tar -C "$SITE" -cf - . | xz -T0 -6 > "$OUTFILE.tmp"
mv "$OUTFILE.tmp" "$OUTFILE"
echo "fetch_tilelang_wheels: site-packages ${before} MiB unpacked -> ${after} MiB trimmed -> " \
     "$(du -m "$OUTFILE" | cut -f1) MiB packed: $OUTFILE"
