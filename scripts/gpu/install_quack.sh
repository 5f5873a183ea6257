#!/usr/bin/env bash
# Installs QuACK from the two archives of scripts/gpu/fetch_quack_wheels.sh on a machine without
# a package index, in two steps, because each archive travels in its own device call:
#
#   bash scripts/gpu/install_quack.sh a     # first: extracts .whl/quack_a.tar.xz into $DIR/site
#   bash scripts/gpu/install_quack.sh b     # then: installs .whl/quack_b.tar.xz's wheels there
#
# DIR is /tmp/quack (a fixed path, so that step b finds what step a left on the same machine;
# QUACK_DIR overrides it). Step b pip-installs the wheels with --no-deps --no-index --target into
# a new folder and merges it into $DIR/site (pip --target skips a package folder that already
# exists, and nvidia_cutlass_dsl/ is one), then prints the PYTHONPATH to use: $DIR/site and
# $DIR/site/nvidia_cutlass_dsl/dsl_packages (the .pth file that adds the latter is not run for
# a --target folder).
set -euo pipefail

ROOT=$(cd "$(dirname "$0")/../.." && pwd)
DIR=${QUACK_DIR:-/tmp/quack}
step=${1:-}

case "$step" in
a)
    rm -rf "$DIR"
    mkdir -p "$DIR/site"
    tar -xJf "$ROOT/.whl/quack_a.tar.xz" -C "$DIR/site"
    echo "install_quack: $ROOT/.whl/quack_a.tar.xz extracted into $DIR/site; next: install_quack.sh b"
    ;;
b)
    [ -d "$DIR/site/nvidia_cutlass_dsl" ] || {
        echo "install_quack: $DIR/site has no nvidia_cutlass_dsl: run 'install_quack.sh a' first" \
             "(on this same machine)" >&2
        exit 1
    }
    rm -rf "$DIR/wheels" "$DIR/new"
    mkdir -p "$DIR/wheels"
    tar -xJf "$ROOT/.whl/quack_b.tar.xz" -C "$DIR/wheels"
    python3 -m pip install --quiet --no-deps --no-index --target "$DIR/new" "$DIR"/wheels/*.whl
    cp -a "$DIR/new/." "$DIR/site/"
    rm -rf "$DIR/new" "$DIR/wheels"
    PP="$DIR/site:$DIR/site/nvidia_cutlass_dsl/dsl_packages"
    PYTHONPATH="$PP${PYTHONPATH:+:$PYTHONPATH}" python3 -c \
        'import quack, quack.softmax; print("install_quack: quack", quack.__version__, "imports")'
    echo "export PYTHONPATH=$PP:\$PYTHONPATH"
    ;;
*)
    echo "usage: $0 a|b   (a: extract archive A; b: install archive B's wheels, print PYTHONPATH)" >&2
    exit 2
    ;;
esac
