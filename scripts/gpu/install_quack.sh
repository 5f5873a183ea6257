#!/usr/bin/env bash
# Installs QuACK from the archives of scripts/gpu/fetch_quack_wheels.sh on a machine without a
# package index, in steps, because each piece travels to the machine on its own:
#
#   bash scripts/gpu/install_quack.sh a     # twice, with .whl/quack_a.tar.xz.0, then .1: keeps
#                                           # each part in $DIR/parts; once both are there,
#                                           # extracts archive A into $DIR/site
#   bash scripts/gpu/install_quack.sh b     # then: installs .whl/quack_b.tar.xz's wheels there
#
# DIR is /tmp/quack (a fixed path, so that later steps find what earlier ones left on the same
# machine; QUACK_DIR overrides it). Step b pip-installs the wheels with --no-deps --no-index
# --target into a new folder and merges it into $DIR/site (pip --target skips a package folder
# that already exists, and nvidia_cutlass_dsl/ is one), then prints the PYTHONPATH to use:
# $DIR/site and $DIR/site/nvidia_cutlass_dsl/dsl_packages (the .pth file that adds the latter
# is not run for a --target folder).
set -euo pipefail

ROOT=$(cd "$(dirname "$0")/../.." && pwd)
DIR=${QUACK_DIR:-/tmp/quack}
step=${1:-}

case "$step" in
a)
    mkdir -p "$DIR/parts"
    found=0
    for part in "$ROOT"/.whl/quack_a.tar.xz.[01]; do
        [ -f "$part" ] || continue
        cp "$part" "$DIR/parts/"
        found=1
    done
    [ "$found" = 1 ] || { echo "install_quack: no .whl/quack_a.tar.xz.0 or .1 here" >&2; exit 1; }
    if [ ! -f "$DIR/parts/quack_a.tar.xz.0" ] || [ ! -f "$DIR/parts/quack_a.tar.xz.1" ]; then
        echo "install_quack: one part of archive A kept in $DIR/parts; run 'install_quack.sh a'" \
             "again with the other part"
        exit 0
    fi
    rm -rf "$DIR/site"
    mkdir -p "$DIR/site"
    cat "$DIR/parts/quack_a.tar.xz.0" "$DIR/parts/quack_a.tar.xz.1" | tar -xJf - -C "$DIR/site"
    rm -rf "$DIR/parts"
    echo "install_quack: archive A extracted into $DIR/site; next: install_quack.sh b"
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
    echo "usage: $0 a|b   (a: keep a part of archive A, extract it once both are here; b: install archive B's wheels, print PYTHONPATH)" >&2
    exit 2
    ;;
esac
