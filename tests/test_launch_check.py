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

BASE, MOVED = check_launches.BASE, check_launches.MOVED_BASE
# name -> registers, static shared memory, thread bound, parameter sizes
KERNELS = {"k": [32, 1024, 256, [8, 8, 8]]}


def ptr(value):
    return struct.pack("<Q", value).hex()


def log(base, launch="launch k grid=4,1,1 block=256,1,1 smem=0 stream=(nil) args={a}|{b}|{c}", extra="",
        workspace=64, a=0, b=1 << 37, c=8 << 37):
    """A run's log with the buffers at `base`: a and b are pointers into the input and the output
    region, c into the workspace's (offsets from base)."""
    inp, out, ws = base, base + (1 << 37), base + (8 << 37)
    return "\n".join([
        "CASE softmax f32 in=4x64",
        f"BUFFER in {inp:#x} {inp + 1024:#x}",
        f"BUFFER out {out:#x} {out + 1024:#x}",
        "  variant auto kernel=k workspace=64",
        f"BUFFER workspace {ws:#x} {ws + workspace:#x}",
        extra.format(ws=ws),
        launch.format(a=ptr(base + a), b=ptr(base + b), c=ptr(base + c)),
        "END",
    ])


def problems(gpu="h200", **kw):
    found, _, launches, launched = check_launches.check(log(BASE, **kw), log(MOVED, **kw), KERNELS, gpu)
    return found, launches, launched


def test_a_clean_log_passes():
    found, launches, launched = problems()
    assert found == [] and launches == 1 and launched == {"k"}


@pytest.mark.parametrize("kw, expected", [
    (dict(launch="launch k grid=4,1,1 block=512,1,1 smem=0 stream=(nil) args={a}|{b}|{c}"), "512 threads a block"),
    (dict(launch="launch k grid=0,1,1 block=256,1,1 smem=0 stream=(nil) args={a}|{b}|{c}"), "grid"),
    (dict(launch="launch k grid=4,1,1 block=256,1,1 smem=65536 stream=(nil) args={a}|{b}|{c}"),
     "dynamic shared memory"),
    (dict(a=1028), "outside the case's buffers"),
    (dict(c=(8 << 37) + 72), "outside the case's buffers"),
    (dict(extra="memset {ws:#x} 255 128 (nil)"), "outside the workspace"),
    (dict(extra="  ERROR execute: OPRT_ERR_RUNTIME: failed"), "ERROR execute"),
    (dict(extra="  variant online: declined: OPRT_ERR_INVALID_ARG"), "declined"),
    (dict(launch="launch k grid=6,1,1 block=256,1,1 smem=0 stream=(nil) cluster=4,1,1 args={a}|{b}|{c}"),
     "not a multiple of cluster"),
    (dict(launch="launch k grid=16,1,1 block=256,1,1 smem=0 stream=(nil) cluster=16,1,1 args={a}|{b}|{c}"),
     "clusters of 16 blocks"),
    (dict(launch="launch k grid=100000,1,1 block=256,1,1 smem=0 stream=(nil) cooperative=1 args={a}|{b}|{c}"),
     "cooperative grid"),
    (dict(launch="launch q grid=1,1,1 block=32,1,1 smem=0 stream=(nil) args="), "unknown kernel"),
])
def test_each_bad_launch_is_reported(kw, expected):
    found, _, _ = problems(**kw)
    assert len(found) == 1 and expected in found[0], found


def test_a_cluster_on_a_gpu_without_clusters_is_reported():
    launch = "launch k grid=8,1,1 block=256,1,1 smem=0 stream=(nil) cluster=4,1,1 args={a}|{b}|{c}"
    assert problems(launch=launch)[0] == []
    found = problems(gpu="a100", launch=launch)[0]
    assert len(found) == 1 and "clusters on a GPU without them" in found[0], found


def test_data_that_looks_like_a_pointer_is_not_one():
    # Two 32-bit fields that read as an address far outside the buffers, the same in both runs.
    data = ptr(BASE + (7 << 32) + 3)
    found, _, _ = problems(launch="launch k grid=4,1,1 block=256,1,1 smem=0 stream=(nil) args={a}|{b}|" + data)
    assert found == []


def test_a_launch_that_changes_with_the_buffers_is_reported():
    found = check_launches.check(log(BASE), log(MOVED).replace("grid=4,", "grid=5,"), KERNELS, "h200")[0]
    assert len(found) == 1 and "moved differs" in found[0], found


def test_allowed_shared_memory_and_clusters_and_a_declined_step_pass():
    extra = "setattr k 8 98304\nsetattr k 14 1\n  variant online: declined: OPRT_ERR_NOT_SUPPORTED"
    launch = "launch k grid=16,1,1 block=256,1,1 smem=65536 stream=(nil) cluster=16,1,1 args={a}|{b}|{c}"
    assert problems(launch=launch, extra=extra)[0] == []


PTX = """
.visible .entry waits_first(
\t.param .u64 waits_first_param_0
)
{
\tld.param.u64 \t%rd1, [waits_first_param_0];
\tgriddepcontrol.launch_dependents;
\tgriddepcontrol.wait;
\t@%p1 ld.global.nc.v4.f32 \t{%f1, %f2, %f3, %f4}, [%rd1];
\tst.async.shared::cluster.mbarrier::complete_tx::bytes.v2.f32 [%r1], {%f1, %f2}, [%r2];
}
.visible .entry reads_first(
\t.param .u64 reads_first_param_0
)
{
\tld.shared.f32 \t%f1, [%r1];
\t@!%p2 cp.async.bulk.shared::cluster.global.mbarrier::complete_tx::bytes [%r1], [%rd1], 64, [%r2];
\tgriddepcontrol.wait;
}
.entry never_waits(
\t.param .u64 never_waits_param_0
)
{
\tst.shared.f32 \t[%r1], %f1;  // ld.global in a comment is not an access
\tret;
}
"""


def test_wait_order_reads_the_ptx():
    waits = check_launches.wait_order(PTX)
    assert set(waits) == {"waits_first", "reads_first", "never_waits"}
    wait, access, text = waits["waits_first"]
    assert wait is not None and access > wait and text.startswith("@%p1 ld.global.nc")
    wait, access, text = waits["reads_first"]
    assert access < wait and "cp.async.bulk" in text
    assert waits["never_waits"] == (None, None, "")


@pytest.mark.parametrize("waits, expected", [
    ({"k": (3, 5, "ld.global.f32 %f1, [%rd1];")}, None),
    ({"k": (3, None, "")}, None),
    ({}, None),  # a kernel without PTX (sm_90a only) is not judged
    ({"k": (5, 3, "ld.global.f32 %f1, [%rd1];")}, "accesses global memory (ld.global.f32"),
    ({"k": (None, 3, "ld.global.f32 %f1, [%rd1];")}, "never waits"),
])
def test_an_overlapped_launch_must_wait_before_it_touches_memory(waits, expected):
    kw = dict(launch="launch k grid=4,1,1 block=256,1,1 smem=0 stream=(nil) overlapped=1 args={a}|{b}|{c}")
    found = check_launches.check(log(BASE, **kw), log(MOVED, **kw), KERNELS, "h200", waits)[0]
    if expected is None:
        assert found == []
    else:
        assert len(found) == 1 and expected in found[0], found
    plain = check_launches.check(log(BASE), log(MOVED), KERNELS, "h200", waits)[0]  # a plain launch: no rule
    assert plain == []
