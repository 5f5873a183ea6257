"""The launch check's judge (tests/cpp/nvidia/launch_check/check_launches.py) on hand-made logs:
a clean log passes, and each kind of bad launch it exists to catch is reported. The check itself
runs on the real library in scripts/ci/launch_check.sh (from scripts/run_tests.sh where nvcc
exists)."""

import importlib.util
import struct
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]
_spec = importlib.util.spec_from_file_location(
    "check_launches", REPO / "tests" / "cpp" / "nvidia" / "launch_check" / "check_launches.py")
check_launches = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(check_launches)

IN, OUT, WS = 0x7000 << 32, (0x7000 << 32) + (1 << 37), (0x7000 << 32) + (8 << 37)
# name -> registers, static shared memory, thread bound, parameter sizes
KERNELS = {"k": [32, 1024, 256, [8, 8, 8]]}


def ptr(value):
    return struct.pack("<Q", value).hex()


def log(launch="launch k grid=4,1,1 block=256,1,1 smem=0 stream=(nil) args={a}|{b}|{c}", extra="", workspace=64,
        a=IN, b=OUT, c=WS):
    return "\n".join([
        "CASE softmax f32 in=4x64",
        f"BUFFER in {IN:#x} {IN + 1024:#x}",
        f"BUFFER out {OUT:#x} {OUT + 1024:#x}",
        "  variant auto kernel=k workspace=64",
        f"BUFFER workspace {WS:#x} {WS + workspace:#x}",
        extra,
        launch.format(a=ptr(a), b=ptr(b), c=ptr(c)),
        "END",
    ])


def problems(text, gpu="h200"):
    found, _, launches, launched = check_launches.check(text, KERNELS, gpu)
    return found, launches, launched


def test_a_clean_log_passes():
    found, launches, launched = problems(log())
    assert found == [] and launches == 1 and launched == {"k"}


@pytest.mark.parametrize("text, expected", [
    (log(launch="launch k grid=4,1,1 block=512,1,1 smem=0 stream=(nil) args={a}|{b}|{c}"), "512 threads a block"),
    (log(launch="launch k grid=0,1,1 block=256,1,1 smem=0 stream=(nil) args={a}|{b}|{c}"), "grid"),
    (log(launch="launch k grid=4,1,1 block=256,1,1 smem=65536 stream=(nil) args={a}|{b}|{c}"),
     "dynamic shared memory"),
    (log(a=IN + 1028), "outside the case's buffers"),
    (log(c=WS + 72), "outside the case's buffers"),
    (log(extra=f"memset {WS:#x} 255 128 (nil)"), "outside the workspace"),
    (log(extra="  ERROR execute: OPRT_ERR_RUNTIME: failed"), "ERROR execute"),
    (log(extra="  variant online: declined: OPRT_ERR_INVALID_ARG"), "declined"),
    (log(launch="launch k grid=6,1,1 block=256,1,1 smem=0 stream=(nil) cluster=4,1,1 args={a}|{b}|{c}"),
     "not a multiple of cluster"),
    (log(launch="launch k grid=100000,1,1 block=256,1,1 smem=0 stream=(nil) cooperative=1 args={a}|{b}|{c}"),
     "cooperative grid"),
    (log(launch="launch q grid=1,1,1 block=32,1,1 smem=0 stream=(nil) args="), "unknown kernel"),
])
def test_each_bad_launch_is_reported(text, expected):
    found, _, _ = problems(text)
    assert len(found) == 1 and expected in found[0], found


def test_allowed_shared_memory_and_a_declined_step_pass():
    extra = "setattr k 8 98304\n  variant online: declined: OPRT_ERR_NOT_SUPPORTED"
    text = log(launch="launch k grid=4,1,1 block=256,1,1 smem=65536 stream=(nil) args={a}|{b}|{c}", extra=extra)
    assert problems(text)[0] == []
