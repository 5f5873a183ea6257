#!/usr/bin/env python3
"""Compares benchmark records: our time per case before and after a change.

  python3 tests/run_ops.py --op softmax --mode bench --peers none --json reports/before.json
  (change a kernel, rebuild)
  python3 tests/run_ops.py --op softmax --mode bench --peers none --json reports/after.json
  python3 tests/compare_bench.py reports/before.json reports/after.json

Each FILE is a record of `tests/run_ops.py --mode bench` (`--json PATH`, or the results.json of
`--report DIR`). One row per case (op, shape, dtype) and condition (dram, hot) that the first
file has: our median time in each file, its ratio to the first file's, `*` where a ratio is
beyond --threshold, and the kernel a file's plan picked where it differs from the first file's.
Then the best peer: the fastest peer that ran and passed its check in any of the files or in
--peers (records, or folders of `*results.json`), and the last file's speed against it. Last, per
file: how many cases got faster or slower than the first file beyond the threshold, the
geometric mean of the ratios, and how many cases are slower than 1.01x the best peer.

Records of different runs (two libraries, two builds) are two processes, possibly minutes apart:
a GPU's clocks and neighbours move, so a difference of a few percent is the noise of one run
against another. Time the decisive pair in one process where it can be (--variant all times the
kernel variants of one build side by side).
"""

import argparse
import json
import math
import sys
from pathlib import Path

CONDITIONS = ("dram", "hot")
PEER_MARGIN = 1.01  # a case counts as behind its best peer when ours is slower than this factor


def load(path):
    """{(op, case, dtype): result} and the record's header of one bench JSON."""
    record = json.loads(Path(path).read_text())
    if "results" not in record:
        raise ValueError(f"{path}: not a record of tests/run_ops.py --mode bench (no 'results')")
    return {(r["op"], r["case"], r["dtype"]): r for r in record["results"]}, record


def ours(result, cond):
    """Our median seconds in a condition, or None (failed, or not measured)."""
    entry = result.get("implementations", {}).get("ours", {}).get(cond, {})
    return entry.get("median_s") if entry.get("status") == "ok" else None


def peer_times(result, cond):
    """{peer: median seconds} of the peers that ran and passed their check."""
    out = {}
    for name, conds in result.get("implementations", {}).items():
        entry = conds.get(cond, {})
        if name != "ours" and entry.get("status") == "ok" and entry.get("median_s"):
            out[name] = entry["median_s"]
    return out


def peer_records(paths):
    """The records named by --peers: files, or every *results.json in a folder."""
    files = []
    for p in map(Path, paths):
        files += sorted(p.glob("*results.json")) if p.is_dir() else [p]
    return [load(f)[0] for f in files]


def best_peers(runs):
    """{(key, cond): (peer, seconds)}: the fastest passing peer over all the given runs."""
    best = {}
    for run in runs:
        for key, result in run.items():
            for cond in CONDITIONS:
                for name, sec in peer_times(result, cond).items():
                    if (key, cond) not in best or sec < best[key, cond][1]:
                        best[key, cond] = (name, sec)
    return best


def fmt_us(seconds):
    return f"{seconds * 1e6:9.2f}" if seconds is not None else f"{'-':>9}"


def compare(paths, threshold=0.02, peer_paths=(), changed_only=False, out=sys.stdout):
    """Prints the comparison; returns {file: {"faster", "slower", "level", "geomean", "behind",
    "counted"}} (the first file: only "behind" and "counted", its cases behind the best peer)."""
    loaded = [load(p) for p in paths]
    runs = [run for run, _ in loaded]
    labels = [Path(p).name for p in paths]
    if len(set(labels)) < len(labels):
        labels = [str(p) for p in paths]
    for label, (_, record) in zip(labels, loaded):
        env = record.get("environment") or {}
        where = ", ".join(str(env[k]) for k in ("date", "device", "library") if env.get(k))
        print(f"{label}: {where or 'no environment recorded'}", file=out)
    best = best_peers(runs + peer_records(peer_paths))
    base = runs[0]
    print(f"\nour median us: {labels[0]}, then each other file (its ratio to the first; "
          f"'*' beyond {threshold:.0%}; [kernel] where its plan picked another); peer: the "
          f"fastest peer of any record, and its time / the last file's", file=out)
    stats = {label: {"faster": 0, "slower": 0, "level": 0, "logs": [], "behind": 0, "counted": 0}
             for label in labels}
    for key, result in base.items():
        for cond in CONDITIONS:
            t0 = ours(result, cond)
            if t0 is None:
                continue
            times = [ours(run[key], cond) if key in run else None for run in runs]
            peer = best.get((key, cond))
            cells, marked = [], False
            for label, run, t in zip(labels[1:], runs[1:], times[1:]):
                if t is None:
                    cells.append(f"{'-':>9}")
                    continue
                ratio = t / t0
                s = stats[label]
                s["logs"].append(math.log(ratio))
                s["faster" if ratio < 1 - threshold else "slower" if ratio > 1 + threshold else "level"] += 1
                mark = "*" if abs(ratio - 1) > threshold else " "
                marked |= mark == "*"
                kernel = run[key].get("kernel")
                moved = f" [{kernel}]" if kernel and kernel != result.get("kernel") else ""
                cells.append(f"{fmt_us(t)} ({ratio:4.2f}){mark}{moved}")
            for label, t in zip(labels, times):
                if peer and t is not None:
                    stats[label]["counted"] += 1
                    stats[label]["behind"] += t > PEER_MARGIN * peer[1]
            if changed_only and not marked:
                continue
            peer_cell = ""
            if peer:
                peer_cell = f"  peer {fmt_us(peer[1])} {peer[0]}"
                if times[-1] is not None:
                    peer_cell += f" ({peer[1] / times[-1]:.2f}x)"
            op, case, dtype = key
            print(f"{op:>10} {case:>18} {dtype:>4} {cond:>4} {fmt_us(t0)}  " + "  ".join(cells) + peer_cell
                  + f"  {result.get('kernel') or ''}", file=out)
    print("", file=out)
    summary = {}
    for i, label in enumerate(labels):
        s = stats[label]
        behind = (f"slower than {PEER_MARGIN}x the best peer: {s['behind']} of {s['counted']}"
                  if s["counted"] else "no peer times")
        if i == 0:
            print(f"{label}: {behind}", file=out)
            summary[label] = {"behind": s["behind"], "counted": s["counted"]}
            continue
        n = len(s["logs"])
        geomean = math.exp(sum(s["logs"]) / n) if n else float("nan")
        print(f"{label}: {s['faster']} faster, {s['slower']} slower, {s['level']} within "
              f"{threshold:.0%} of {labels[0]} ({n} rows, geometric mean of the ratios {geomean:.3f}); "
              f"{behind}", file=out)
        summary[label] = {"faster": s["faster"], "slower": s["slower"], "level": s["level"],
                          "geomean": geomean, "behind": s["behind"], "counted": s["counted"]}
    return summary


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0],
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("files", nargs="+", metavar="FILE",
                        help="bench records (JSON); the first is the baseline")
    parser.add_argument("--threshold", type=float, default=0.02,
                        help="a ratio beyond 1 +- this is a change (default 0.02)")
    parser.add_argument("--peers", action="append", default=[], metavar="PATH",
                        help="more records (or folders of *results.json) whose peers count as peers")
    parser.add_argument("--changed", action="store_true", help="print only the rows with a change")
    args = parser.parse_args(argv)
    if len(args.files) < 2:
        parser.error("give at least two records: the baseline and one to compare with it")
    try:
        compare(args.files, args.threshold, args.peers, args.changed)
    except (OSError, ValueError) as exc:  # json.JSONDecodeError is a ValueError
        print(f"compare_bench: {exc}", file=sys.stderr)
        return 2
    return 0


if __name__ == "__main__":
    sys.exit(main())
