"""scripts/perf/ncu_hotspots.py on a small source page in the format `ncu --page source --csv` writes."""

import io
import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO / "scripts" / "perf"))
import ncu_hotspots  # noqa: E402

HEADER = ['"Address"', '"Source"', '"# Samples"', '"Instructions Executed"', '"stall_barrier"',
          '"stall_long_sb"', '"stall_barrier (Not Issued)"']
PAGE = "\n".join([
    '"Kernel Name","void k<float>(const float *, float *)",',
    ",".join(HEADER),
    '"0x10","      LDG.E.128 R4, desc[UR4][R2.64]","30","100","0","30","0"',
    '"0x20","      FADD R4, R4, R5","0","300","0","0","0"',
    '"0x30","      BAR.SYNC.DEFER_BLOCKING 0x0","70","100","70","0","70"',
])


def test_summary_counts_instructions_stalls_and_hot_lines(tmp_path):
    page = tmp_path / "page.csv"
    page.write_text(PAGE + "\n")
    out = io.StringIO()
    total, by_reason = ncu_hotspots.summarize(str(page), elements=3200, top=2, out=out)
    text = out.getvalue()
    assert total == 500
    assert by_reason == {"barrier": 70, "long_sb": 30}  # the "(Not Issued)" column is not added twice
    assert "instructions per element: 5.0" in text  # 32 * 500 / 3200
    assert "barrier 70%, long_sb 30%" in text
    assert "BAR.SYNC" in text and "FADD" in text  # most sampled and most executed
    assert "LDG.E.128" not in text  # third of three with --top 2


def test_not_a_source_page_is_a_clear_error(tmp_path):
    bad = tmp_path / "bad.csv"
    bad.write_text('"ID","Kernel Name"\n"1","k"\n')
    r = subprocess.run([sys.executable, str(REPO / "scripts" / "perf" / "ncu_hotspots.py"), str(bad)],
                       capture_output=True, text=True)
    assert r.returncode == 2
    assert "not an ncu source page" in r.stderr


@pytest.mark.parametrize("text,value", [("1,234", 1234), ("17", 17), ("", 0), ("-", 0)])
def test_numbers_as_ncu_prints_them(text, value):
    assert ncu_hotspots.as_int(text) == value
