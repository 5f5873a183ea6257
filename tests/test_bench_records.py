"""The benchmark's records on the CPU: both conditions, every peer (n/a with its reason, a wrong
output flagged), min <= median <= max in the JSON and CSV, plot families that never join
unrelated shapes."""

import csv
import json
import types

import numpy as np
import pytest

import bench as bench_modules
import cases as case_modules
from benchlib import bench, report
from benchlib.peers import NotAvailable
from operator_runtime_testing import backends
from operator_runtime_testing.cases import BenchCase


@pytest.fixture(scope="module")
def results():
    target = backends.select("cpu")
    if target.skip_reason:
        pytest.skip(target.skip_reason)
    wb = bench.Workbench(target, seed=3, repeats=3, rotate_bytes=1 << 20)
    softmax = bench_modules.load("softmax")

    def not_here(out, src, dim=-1):
        raise NotAvailable("not importable here")

    def wrong(out, src, dim=-1):
        return lambda: np.copyto(out, src)

    fake = types.SimpleNamespace(prepare=softmax.prepare, PEERS=softmax.PEERS)
    extra = {"triton": not_here, "compile": wrong}
    op = case_modules.load("softmax").OP
    out = []
    for shape in ((64, 256), (8, 256), (8, 512)):
        c = BenchCase("x".join(map(str, shape)), (shape,))
        r = bench.run_bench(op, fake, c, "f32", wb, seed=5)
        for name, factory in extra.items():  # the GPU peers' paths, on numpy arrays
            x = wb.randn(shape, "f32")
            checker = bench.Checker(op, fake, wb.lib, "f32", [x], {})
            r.peers[name] = bench._run_peer(wb, factory, [([x], None)],
                                            [wb.lib.empty(shape, "f32")], {}, checker, "f32")
        out.append(r)
    ceiling = bench.measure_ceiling(wb, bench_modules.load("copy"), 1, nbytes=1 << 20)
    return out, ceiling, wb


def test_conditions_and_peers(results):
    rs, _, wb = results
    for r in rs:
        assert r.ok, r.message
        assert set(r.ours) == {"hot", "dram"}
        assert r.sets == bench.set_count(r.nbytes, wb.rotate_bytes) > 1
        numpy_peer = r.peers["numpy"]
        assert not numpy_peer.why and numpy_peer.ok and set(numpy_peer.times) == {"hot", "dram"}
        assert r.peers["triton"].why == "not importable here"
        assert not r.peers["compile"].ok  # a peer's wrong output is caught
        name, _ = report.best_peer(r, "dram")
        assert name == "numpy"  # a failed or missing peer is never the best


def test_json_and_csv(results, tmp_path):
    rs, ceiling, wb = results
    report.write_json(tmp_path / "r.json", env={}, command="c", seed=1, ceiling=ceiling,
                      rotate_bytes=wb.rotate_bytes, results=rs, failures=[], quiet=True)
    report.write_csv(tmp_path / "r.csv", rs, ceiling, quiet=True)
    record = json.loads((tmp_path / "r.json").read_text())
    impls = record["results"][0]["implementations"]
    assert set(impls) == {"ours", "numpy", "triton", "compile"}
    for cond in ("hot", "dram"):
        t = impls["ours"][cond]
        assert 0 < t["min_s"] <= t["median_s"] <= t["max_s"]
        assert impls["triton"][cond]["status"].startswith("n/a: ")
        assert impls["compile"][cond]["status"].startswith("FAIL: ")
    rows = list(csv.DictReader(open(tmp_path / "r.csv")))
    assert len(rows) == len(rs) * 4 * 2  # cases x implementations x conditions
    assert {r["condition"] for r in rows} == {"hot", "dram"}


def test_families_join_only_related_shapes(results):
    rs, _, _ = results
    fam = {r.case: r.family for r in rs}
    assert fam["64x256"] == fam["8x256"] != fam["8x512"]
