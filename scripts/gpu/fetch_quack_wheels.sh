#!/usr/bin/env bash
# Brings QuACK (quack-kernels, the CuTe-DSL kernels the benchmark times as a softmax peer) to a
# machine without a package index (the H200 machine), in pieces that each fit one
# transfer of at most 64 MiB, the working tree included:
#
#   .whl/quack_a.tar.xz.0, .1   nvidia-cutlass-dsl-libs-cu12 unpacked (its wheel is 92 MB; the
#                               tree repacked with xz -9e is ~60 MiB), cut in two halves
#   .whl/quack_b.tar.xz         every other wheel, as wheels: quack-kernels, nvidia-cutlass-dsl and
#                               its -libs-base / -libs-core, apache-tvm-ffi, torch-c-dlpack-ext, einops
#
#   bash scripts/gpu/fetch_quack_wheels.sh               # here, with PyPI: writes .whl/ (git-ignored)
#   # on the GPU machine, one command carrying .whl/quack_a.tar.xz.0, then one carrying .1
#   # (the same machine, still warm), each running:
#   bash scripts/gpu/install_quack.sh a
#   # then a command carrying .whl/quack_b.tar.xz:
#   bash scripts/gpu/install_quack.sh b     # prints the PYTHONPATH to use
#
# The H200 machine has python 3.12, torch, numpy and cuda-bindings; the pins of apache-tvm-ffi
# and torch-c-dlpack-ext are those of scripts/gpu/fetch_tilelang_wheels.sh (quack-kernels 0.6.5
# asks apache-tvm-ffi >=0.1.6,<0.2, nvidia-cutlass-dsl >=4.7, torch-c-dlpack-ext, einops).
# Change them together.
set -euo pipefail

ROOT=$(cd "$(dirname "$0")/../.." && pwd)
WHL=${WHL_DIR:-$ROOT/.whl}
PYVER=3.12
PACKAGES=(
    quack-kernels==0.6.5
    nvidia-cutlass-dsl==4.8.1
    nvidia-cutlass-dsl-libs-base==4.8.1
    nvidia-cutlass-dsl-libs-core==4.8.1
    nvidia-cutlass-dsl-libs-cu12==4.8.1
    apache-tvm-ffi==0.1.12
    torch-c-dlpack-ext==0.1.5
    einops==0.8.2
)
BIG=nvidia-cutlass-dsl-libs-cu12  # archive A; the rest go to archive B

mkdir -p "$WHL"
for spec in "${PACKAGES[@]}"; do
    python3 -m pip download --quiet --no-deps --only-binary=:all: \
        --python-version "$PYVER" --implementation cp \
        --platform manylinux_2_28_x86_64 --platform manylinux_2_27_x86_64 \
        --platform manylinux_2_24_x86_64 --platform manylinux_2_17_x86_64 \
        --platform manylinux2014_x86_64 -d "$WHL" "$spec"
done

wheel_of() {  # the downloaded wheel of a name==version spec
    local name=${1%%==*} version=${1#*==}
    local found pattern
    pattern="$(echo "$name" | tr '-' '_')-${version}-*.whl"
    # shellcheck disable=SC2206
    found=( $WHL/$pattern )
    [ -f "${found[0]}" ] || { echo "fetch_quack_wheels: no wheel for $1 in $WHL" >&2; exit 1; }
    echo "${found[0]}"
}

WORK=$(mktemp -d)
trap 'rm -rf "$WORK"' EXIT
mkdir -p "$WORK/a" "$WORK/b"
for spec in "${PACKAGES[@]}"; do
    if [ "${spec%%==*}" = "$BIG" ]; then
        python3 -m zipfile -e "$(wheel_of "$spec")" "$WORK/a"
    else
        cp "$(wheel_of "$spec")" "$WORK/b/"
    fi
done

tar -C "$WORK/a" -cf - . | xz -T0 -9e > "$WORK/quack_a.tar.xz"
rm -f "$WHL"/quack_a.tar.xz*
split -n 2 -d -a 1 "$WORK/quack_a.tar.xz" "$WHL/quack_a.tar.xz."  # .0 and .1
tar -C "$WORK/b" -cf - . | xz -T0 -9e > "$WHL/quack_b.tar.xz.tmp"
mv "$WHL/quack_b.tar.xz.tmp" "$WHL/quack_b.tar.xz"
for f in "$WHL/quack_a.tar.xz.0" "$WHL/quack_a.tar.xz.1" "$WHL/quack_b.tar.xz"; do
    bytes=$(stat -c %s "$f")
    echo "fetch_quack_wheels: $f $((bytes / 1048576)) MiB ($bytes bytes)"
    if [ "$bytes" -ge $((40 * 1048576)) ]; then
        echo "fetch_quack_wheels: $f is not below 40 MiB: it may not travel in one call" >&2
        exit 1
    fi
done
