"""scripts/perf/sass_loads.py on small SASS listings in the format `cuobjdump -sass` prints."""

import io
import subprocess
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO / "scripts" / "perf"))
import sass_loads  # noqa: E402


def _listing(name, instructions):
    lines = [f"\t\tFunction : {name}", "\t.headerflags\t@\"EF_CUDA_SM90\""]
    for i, ins in enumerate(instructions):
        lines.append(f"        /*{i * 16:04x}*/                   {ins} ;"
                     f"                  /* 0x000fe20000000f00 */")
    return "\n".join(lines) + "\n"


# A 16-bit thread of two vectors whose second load waits for the first one's use (the
# conversion sat in the load's branch), and the same row with both loads issued first.
SERIAL = _listing("serial", [
    "S2R R26, SR_TID.X",
    "@!P4 LDG.E.128.CONSTANT R8, desc[UR4][R10.64]",
    "@!P4 SHF.L.U32 R2, R8, 0x10, RZ",
    "FMNMX R15, R2, -INF , !PT",
    "@P5 BRA 0x580",
    "LDG.E.128.CONSTANT R8, desc[UR4][R8.64]",
    "IMAD.U32 R17, R8, 0x10000, RZ",
    "STG.E.128 desc[UR4][R24.64], R16",
])
TOGETHER = _listing("together", [
    "@!P1 LDG.E.128 R8, desc[UR8][R2.64]",
    "@!P0 LDG.E.128 R4, desc[UR8][R2.64+0x1000]",
    "LDGSTS.E.BYPASS.128 [R3], desc[UR8][R2.64]",  # a copy into shared memory: no register
    "IMAD.U32 R12, R8, 0x10000, RZ",
    "FMNMX R13, R12, R4, !PT",
])
COPY = _listing("copy", [
    "LDG.E.64 R4, desc[UR4][R2.64]",
    "MOV R6, R4",  # reads a loaded register: a use
    "LDG.E R8, desc[UR4][R2.64+0x8]",
    "STG.E desc[UR4][R10.64], R8",  # a store of a loaded value: a use
])


def test_runs_follow_the_loaded_registers():
    kernels = sass_loads.parse_sass(SERIAL + TOGETHER + COPY)
    assert list(kernels) == ["serial", "together", "copy"]
    assert sass_loads.load_runs(kernels["serial"]) == (2, [1, 1])
    assert sass_loads.load_runs(kernels["together"]) == (2, [2])  # LDGSTS is no register load
    assert sass_loads.load_runs(kernels["copy"]) == (2, [1, 1])


def test_a_load_whose_address_was_loaded_uses_it():
    kernels = sass_loads.parse_sass(_listing("chase", [
        "LDG.E.64 R2, desc[UR4][R4.64]",
        "LDG.E R6, desc[UR4][R2.64]",  # the address is the first load's value
        "FADD R7, R6, R6",
    ]))
    assert sass_loads.load_runs(kernels["chase"]) == (2, [1, 1])


def test_report_filters_and_prints_a_line_per_kernel():
    out = io.StringIO()
    found = sass_loads.report(sass_loads.parse_sass(SERIAL + TOGETHER), "ser", out=out)
    assert list(found) == ["serial"]
    assert out.getvalue().split() == ["2", "loads,", "1", "before", "first", "use,", "runs", "1,", "1",
                                      "serial"]


def test_command_line_reads_a_listing(tmp_path):
    listing = tmp_path / "k.sass"
    listing.write_text(SERIAL + TOGETHER)
    run = subprocess.run([sys.executable, str(REPO / "scripts" / "perf" / "sass_loads.py"), str(listing),
                          "--kernel", "together"], capture_output=True, text=True, timeout=60)
    assert run.returncode == 0, run.stderr
    assert "2 before first use" in run.stdout and "serial" not in run.stdout
    missing = subprocess.run([sys.executable, str(REPO / "scripts" / "perf" / "sass_loads.py"), str(listing),
                              "--kernel", "nothing"], capture_output=True, text=True, timeout=60)
    assert missing.returncode != 0 and "no kernel with global loads matching nothing" in missing.stderr
    absent = subprocess.run([sys.executable, str(REPO / "scripts" / "perf" / "sass_loads.py"),
                             str(tmp_path / "absent.cubin")], capture_output=True, text=True, timeout=60)
    assert absent.returncode != 0 and "no file" in absent.stderr and "Traceback" not in absent.stderr
