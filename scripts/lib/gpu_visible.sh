# gpu_visible: whether an NVIDIA GPU is visible here (nvidia-smi lists one). Sourced by the
# build scripts (build_common.sh), quickstart.sh and the GPU scripts (scripts/gpu/steps.sh).
gpu_visible() { command -v nvidia-smi >/dev/null 2>&1 && nvidia-smi -L 2>/dev/null | grep -q GPU; }
