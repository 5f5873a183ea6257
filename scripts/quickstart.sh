#!/usr/bin/env bash
# From a fresh machine to a running project: installs GoogleTest and the Python requirements,
# builds the best variant this machine can run (NVIDIA when nvcc and a GPU are
# present, else CPU), then runs every operator: checks, then the benchmark table.
set -euo pipefail
REPO_ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
PYTHON="${PYTHON:-python3}"
bash "$REPO_ROOT/scripts/build_cpu.sh" env  # tools, GoogleTest, Python requirements
source "$REPO_ROOT/scripts/lib/gpu_visible.sh"
if command -v nvcc >/dev/null 2>&1 && gpu_visible; then
    variant=nvidia
else
    variant=cpu
fi
bash "$REPO_ROOT/scripts/build_$variant.sh" build
export CAMP_BUILD_DIR="${CAMP_BUILD_DIR:-$REPO_ROOT/build-$variant}"
"$PYTHON" "$REPO_ROOT/tests/run_ops.py" --op all --backend auto --mode all
echo
echo "Next: write your first kernel, docs/camp.md (python3 scripts/camp.py exercise softmax)"
