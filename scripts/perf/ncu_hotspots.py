#!/usr/bin/env python3
"""Where a kernel spends its instructions and its stalls, from an Nsight Compute source page.

Nsight Compute samples, per SASS instruction, how often it ran and why warps waited there.
This script reads that page (CSV) and prints what a kernel writer looks at first:

- the instructions executed per element (compare with what the algorithm needs),
- the stall reasons summed over the kernel,
- the instructions that ran most or were sampled most, with their two main stall reasons.

Make the page on the GPU machine (the kernel built with -lineinfo helps, not needed):

    ncu --set full --import-source yes -k regex:softmax_rows_stream -s 1 -c 1 -o prof \\
        python3 tests/run_ops.py --op softmax --backend nvidia --mode bench --shape 256x262144 --dtype f32 --peers none --repeats 1 --rotate-mib 0
    ncu -i prof.ncu-rep --page source --csv --print-source sass > prof.csv

then, anywhere:

    python3 scripts/perf/ncu_hotspots.py prof.csv --elements 67108864

(--elements: the elements the profiled launch processed, for the per-element figure.)
docs/kernels/profiling.md walks through one such profile.
"""

import argparse
import csv
import sys


def read_source_page(path):
    """(kernel name, rows as dicts) of an `ncu --page source --csv` file."""
    with open(path, newline="") as f:
        rows = list(csv.reader(f))
    kernel = ""
    start = 0
    for i, row in enumerate(rows):
        if row and row[0] == "Kernel Name":
            kernel = row[1] if len(row) > 1 else ""
        if row and row[0] == "Address":
            start = i
            break
    else:
        raise ValueError(f"{path}: no 'Address' header row: not an ncu source page (--page source --csv)")
    header = rows[start]
    records = [dict(zip(header, r)) for r in rows[start + 1:] if len(r) == len(header)]
    return kernel, header, records


def as_int(text):
    try:
        return int(float(text.replace(",", "")))
    except (ValueError, AttributeError):
        return 0


def summarize(path, elements=None, top=25, out=sys.stdout):
    kernel, header, records = read_source_page(path)
    stalls = [h for h in header if h.startswith("stall_") and "Not Issued" not in h]
    executed = [as_int(r.get("Instructions Executed", "0")) for r in records]
    samples = [as_int(r.get("# Samples", "0")) for r in records]
    total_exec, total_samples = sum(executed), sum(samples)
    print(f"kernel: {kernel}", file=out)
    print(f"warp instructions executed: {total_exec:,}   stall samples: {total_samples:,}", file=out)
    if elements:
        # A warp instruction does the work of 32 threads.
        print(f"instructions per element: {32 * total_exec / elements:.1f} (thread instructions)", file=out)
    by_reason = {h[len("stall_"):]: sum(as_int(r.get(h, "0")) for r in records) for h in stalls}
    ranked = sorted(by_reason.items(), key=lambda kv: -kv[1])
    print("stall samples by reason: " + ", ".join(
        f"{name} {100 * n / max(total_samples, 1):.0f}%" for name, n in ranked[:8] if n), file=out)
    order = sorted(range(len(records)), key=lambda i: -(executed[i] / max(total_exec, 1)
                                                        + samples[i] / max(total_samples, 1)))
    print(f"\n{'#':>5} {'executed':>8} {'sampled':>8}  top stalls                         instruction", file=out)
    for i in sorted(order[:top]):
        r = records[i]
        reasons = sorted(((as_int(r.get(h, "0")), h[len("stall_"):]) for h in stalls), reverse=True)[:2]
        why = ", ".join(f"{name} {n}" for n, name in reasons if n) or "-"
        print(f"{i:5} {100 * executed[i] / max(total_exec, 1):7.1f}% {100 * samples[i] / max(total_samples, 1):7.1f}%"
              f"  {why:34.34} {r.get('Source', '').strip()}", file=out)
    return total_exec, by_reason


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("csv", help="the output of `ncu -i REPORT --page source --csv --print-source sass`")
    ap.add_argument("--elements", type=int, help="elements the profiled launch processed")
    ap.add_argument("--top", type=int, default=25, help="instructions to list (default 25)")
    args = ap.parse_args(argv)
    try:
        summarize(args.csv, args.elements, args.top)
    except (OSError, ValueError) as e:
        print(f"ncu_hotspots: {e}", file=sys.stderr)
        return 2
    return 0


if __name__ == "__main__":
    sys.exit(main())
