"""Result tables printed row by row as results arrive, and the benchmark's records: the
report (report.md and its plot bandwidth.png) that run_ops --report writes, and the JSON / CSV
files of --json / --csv (min / median / max per case, implementation and condition)."""

import csv
import datetime
import json
import math
import os
import platform
import subprocess
import sys
from pathlib import Path


class Table:
    """columns: (title, width) pairs; a negative width left-aligns the column."""

    def __init__(self, columns, file=None):
        self.columns = columns
        self.file = file

    def _line(self, cells):
        parts = []
        for (_, width), cell in zip(self.columns, cells):
            text = str(cell)
            parts.append(text.ljust(-width) if width < 0 else text.rjust(width))
        return "  ".join(parts).rstrip()

    def header(self):
        line = self._line([title for title, _ in self.columns])
        print(line, file=self.file, flush=True)
        print("-" * len(line), file=self.file, flush=True)

    def row(self, *cells):
        print(self._line(cells), file=self.file, flush=True)


def fmt_time(seconds):
    if seconds is None or not math.isfinite(seconds):
        return "-"
    if seconds >= 1.0:
        return f"{seconds:.3f} s"
    if seconds >= 1e-3:
        return f"{seconds * 1e3:.3f} ms"
    return f"{seconds * 1e6:.2f} us"


def fmt_gbps(nbytes, seconds):
    if seconds is None or seconds <= 0:
        return "-"
    return f"{nbytes / seconds / 1e9:.2f}"


def fmt_err(err):
    return "-" if err is None else ("inf" if math.isinf(err) else f"{err:.2e}")


def fmt_bytes(nbytes):
    for unit, size in (("GiB", 1 << 30), ("MiB", 1 << 20), ("KiB", 1 << 10)):
        if nbytes >= size:
            value = nbytes / size
            return f"{value:.0f} {unit}" if value == int(value) else f"{value:.1f} {unit}"
    return f"{nbytes} B"


# ---------------------------------------------------------------------------
# The environment of a run


def _run(cmd):
    try:
        out = subprocess.run(cmd, capture_output=True, text=True, timeout=20, check=True)
        return out.stdout.strip()
    except (OSError, subprocess.SubprocessError):
        return None


def _cpu_model():
    try:
        with open("/proc/cpuinfo") as f:
            for line in f:
                if line.startswith("model name"):
                    return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or platform.machine()


def environment(target, library_path):
    """What the report's header records: date, device, driver, library versions."""
    import numpy as np

    env = {
        "date": datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%d %H:%M UTC"),
        "backend": target.resolved,
        "library": str(library_path),
        "python": platform.python_version(),
        "numpy": np.__version__,
    }
    try:
        cores = len(os.sched_getaffinity(0))
    except AttributeError:
        cores = os.cpu_count()
    env["cpu"] = f"{_cpu_model()}, {cores} cores usable"
    if target.lib.name == "torch":
        import torch

        dev = target.lib.device
        props = torch.cuda.get_device_properties(dev)
        l2 = getattr(props, "L2_cache_size", 0)
        env["device"] = (f"{torch.cuda.get_device_name(dev)} ({props.multi_processor_count} SMs"
                         + (f", {l2 / 2**20:.0f} MiB L2" if l2 else "")
                         + f", {props.total_memory / 2**30:.0f} GiB)")
        env["torch"] = f"{torch.__version__} (CUDA {torch.version.cuda})"
        driver = _run(["nvidia-smi", "--query-gpu=driver_version", "--format=csv,noheader"])
        if not driver:
            try:
                with open("/proc/driver/nvidia/version") as f:
                    driver = f.readline().strip()
            except OSError:
                driver = "unknown (no nvidia-smi)"
        env["driver"] = driver.splitlines()[0]
        import importlib.metadata

        for key, dist in (("triton", "triton"), ("quack", "quack-kernels"),
                          ("cutlass-dsl", "nvidia-cutlass-dsl")):
            try:
                env[key] = importlib.metadata.version(dist)
            except importlib.metadata.PackageNotFoundError:
                pass
    else:
        env["device"] = env["cpu"]
    return env


def command_line():
    """The exact command of this run, as typed from the repository root where possible."""
    import shlex

    argv = list(sys.argv)
    try:
        argv[0] = os.path.relpath(argv[0])
    except ValueError:
        pass
    prefix = ""
    if os.environ.get("CAMP_BUILD_DIR"):
        prefix = f"CAMP_BUILD_DIR={shlex.quote(os.environ['CAMP_BUILD_DIR'])} "
    return prefix + "python3 " + " ".join(shlex.quote(a) for a in argv)


# ---------------------------------------------------------------------------
# Per case, implementation and condition


def implementations(r):
    """(name, condition, Timing or None, status) of a BenchResult: ours, then each peer, in
    both conditions; status "ok", "n/a: why" or "FAIL: message"."""
    rows = []
    for cond in ("dram", "hot"):
        rows.append(("ours", cond, r.ours[cond], "ok" if r.ok else f"FAIL: {r.message}"))
    for name, p in r.peers.items():
        for cond in ("dram", "hot"):
            if p.why:
                rows.append((name, cond, None, f"n/a: {p.why}"))
            else:
                rows.append((name, cond, p.times[cond], "ok" if p.ok else f"FAIL: {p.message}"))
    return rows


def best_peer(r, condition):
    """(name, seconds) of the fastest peer that ran and passed its check, or (None, None)."""
    timed = [(p.times[condition].best_s, name) for name, p in r.peers.items()
             if not p.why and p.ok]
    if not timed:
        return None, None
    seconds, name = min(timed)
    return name, seconds


def _timing_record(t, nbytes, ceiling_gbps):
    return {"min_s": t.min_s, "median_s": t.best_s, "max_s": t.max_s,
            "loop_median_s": t.loop_s, "graph_median_s": t.graph_s, "calls_per_repeat": t.iters,
            "repeats": t.repeats, "gbps": nbytes / t.best_s / 1e9,
            "pct_ceiling": 100 * nbytes / t.best_s / 1e9 / ceiling_gbps}


def write_json(path, *, env, command, seed, ceiling, rotate_bytes, results, failures,
               overhead=None, quiet=False):
    """Every figure of the run: per case, per implementation (ours and each peer) and per
    condition (hot: one buffer set replayed; dram: sets cycled through rotate_bytes),
    min / median / max seconds per call over the repeats."""
    record = {
        "environment": env, "command": command, "seed": seed,
        "conditions": {"hot": "one buffer set, the same call replayed (cache-hot when it fits)",
                       "dram": f"buffer sets cycled through {rotate_bytes} bytes"},
        "rotate_bytes": rotate_bytes,
        "ceiling": {"bytes": ceiling.nbytes, "gbps": ceiling.gbps, "source": ceiling.source,
                    "ours_s": ceiling.ours.best_s, "peer": ceiling.peer_name,
                    "peer_s": ceiling.peer.best_s},
        "results": [],
        "failures": [{"op": op, "case": case, "dtype": dtype, "error": msg}
                     for op, case, dtype, msg in failures],
    }
    for r in results:
        impls = {}
        for name, cond, t, status in implementations(r):
            entry = {"status": status}
            if t is not None:
                entry.update(_timing_record(t, r.nbytes, ceiling.gbps))
            impls.setdefault(name, {})[cond] = entry
        record["results"].append({
            "op": r.op, "case": r.case, "dtype": r.dtype, "shapes": [list(x) for x in r.shapes],
            "params": r.params, "series": r.series, "family": r.family, "bytes": r.nbytes,
            "sets": r.sets, "dram_working_set_bytes": r.sets * r.nbytes, "kernel": r.kernel,
            "check": {"ok": r.ok, "max_err": r.max_err, "message": r.message},
            "implementations": impls})
    if overhead is not None:
        record["overhead"] = [{"what": what, "seconds_per_call": sec, "note": note}
                              for what, sec, note in overhead]
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(path.name + ".tmp")  # replaced whole: a run killed mid-write keeps
    tmp.write_text(json.dumps(record, indent=1, default=str) + "\n")  # the last record
    tmp.replace(path)
    if not quiet:
        print(f"bench: wrote {path}", flush=True)


CSV_COLUMNS = ("op", "case", "dtype", "shapes", "params", "family", "bytes", "sets", "kernel",
               "implementation", "condition", "min_s", "median_s", "max_s", "gbps",
               "pct_ceiling", "status")


def write_csv(path, results, ceiling, quiet=False):
    """One row per case, implementation and condition (the JSON's figures, flat)."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(path.name + ".tmp")
    with open(tmp, "w", newline="") as f:
        w = csv.writer(f)
        w.writerow(CSV_COLUMNS)
        for r in results:
            for name, cond, t, status in implementations(r):
                figures = ["", "", "", "", ""]
                if t is not None:
                    rec = _timing_record(t, r.nbytes, ceiling.gbps)
                    figures = [f"{rec['min_s']:.6g}", f"{rec['median_s']:.6g}",
                               f"{rec['max_s']:.6g}", f"{rec['gbps']:.4g}",
                               f"{rec['pct_ceiling']:.1f}"]
                w.writerow([r.op, r.case, r.dtype, " ".join("x".join(map(str, x)) or "()"
                                                           for x in r.shapes),
                            json.dumps(r.params), r.family, r.nbytes, r.sets, r.kernel or "",
                            name, cond, *figures, status])
    tmp.replace(path)
    if not quiet:
        print(f"bench: wrote {path}", flush=True)


# ---------------------------------------------------------------------------
# report.md and bandwidth.png

TARGET_BYTES = 256 << 20  # the performance issue's ">= 256 MiB moved" cases
TARGET_FRACTION = 0.95
PLOT = "bandwidth.png"


def write_report(directory, env, command, ceiling, results, failures, *, peer, seed, wall_s,
                 timing_note):
    """Writes directory/report.md and directory/bandwidth.png (the PNG only when matplotlib
    is importable; the reason is printed and recorded otherwise). `results` are BenchResults;
    `failures` are (op, case, dtype, message) of cases that raised."""
    directory = Path(directory)
    directory.mkdir(parents=True, exist_ok=True)
    png = directory / PLOT
    title = f"{env['backend']} on {env['device']}, {env['date']}"
    plot_problem = write_bandwidth_plot(png, results, ceiling, title)
    if plot_problem:
        print(f"report: {png} not written: {plot_problem}", flush=True)
        if png.exists():
            png.unlink()  # a plot of an earlier run would not match this record

    gbps = ceiling.gbps
    lines = [
        f"# Benchmark record: {env['backend']} backend",
        "",
        "Generated by `tests/run_ops.py --report`; do not edit by hand, run the command again.",
        "",
        "| | |",
        "|---|---|",
        f"| date | {env['date']} |",
        f"| device | {env['device']} |",
    ]
    for key in ("driver", "torch", "triton", "quack", "cutlass-dsl"):
        if key in env:
            lines.append(f"| {key} | {env[key]} |")
    lines += [
        f"| numpy | {env['numpy']} |",
        f"| python | {env['python']} |",
    ]
    if env["cpu"] != env["device"]:
        lines.append(f"| host CPU | {env['cpu']} |")
    lines += [
        f"| library | `{env['library']}` |",
        f"| command | `{command}` |",
        f"| seed | {seed} |",
        f"| run time | {wall_s:.0f} s |",
        "",
        "## Method",
        "",
        timing_note,
        "",
        "## Copy ceiling",
        "",
        f"One {fmt_bytes(ceiling.nbytes // 2)} float32 copy, bytes = read + write "
        f"({fmt_bytes(ceiling.nbytes)}); the better of the two is the ceiling.",
        "",
        "| copy | time | GB/s |",
        "|---|---:|---:|",
        f"| ours (prepare_copy) | {fmt_time(ceiling.ours.best_s)} | {ceiling.ours_gbps:.0f} |",
        f"| {ceiling.peer_name} | {fmt_time(ceiling.peer.best_s)} | {ceiling.peer_gbps:.0f} |",
        "",
        f"**Ceiling: {gbps:.0f} GB/s ({ceiling.source}).**",
        "",
        "## Summary",
        "",
    ]
    lines += _summary(results, failures, gbps, peer)
    lines += ["", "## Bandwidth", ""]
    if plot_problem:
        lines.append(f"{PLOT} was not written: {plot_problem}.")
    else:
        lines.append(f"![Achieved GB/s against bytes moved, per operator and dtype, in the DRAM "
                     f"and hot conditions; colour: implementation; marker: shape family; dotted: "
                     f"the copy ceiling]({PLOT})")
    lines += ["", "## Results", "",
              "Times are medians (min-max over the repeats in the JSON / CSV records); one row "
              "per condition: `dram` (buffer sets cycled, column `sets`) and `hot` (one set "
              "replayed). `best peer`: the fastest peer's time / ours.", ""]
    lines += _results_table(results, gbps)
    nas = _not_available(results)
    if nas:
        lines += ["", "## Peers not run", "", "| peer | why | cases |", "|---|---|---:|"]
        lines += [f"| {name} | {_md(why)} | {n} |" for (name, why), n in nas.items()]
    if failures:
        lines += ["", "## Cases that failed to run", "", "| op | case | dtype | error |",
                  "|---|---|---|---|"]
        lines += [f"| {op} | {case} | {dtype} | {_md(msg)} |" for op, case, dtype, msg in failures]
    path = directory / "report.md"
    path.write_text("\n".join(lines) + "\n")
    print(f"report: wrote {path}" + ("" if plot_problem else f" and {png}"), flush=True)
    return path


def _not_available(results):
    """{(peer, why): number of cases} of the peers that did not run."""
    counts = {}
    for r in results:
        for name, p in r.peers.items():
            if p.why:
                counts[(name, p.why)] = counts.get((name, p.why), 0) + 1
    return counts


def _md(text):
    return str(text).replace("|", "\\|").replace("\n", " ")


def _case_label(r):
    return f"{r.op} {r.case} {r.dtype}"


def _listing(items, limit=24):
    items = list(items)
    more = f", and {len(items) - limit} more" if len(items) > limit else ""
    return ", ".join(items[:limit]) + more


def _summary(results, failures, ceiling_gbps, peer):
    n = len(results) + len(failures)
    bad = [r for r in results if not r.ok]
    lines = [f"- {n} cases: {len(bad) + len(failures)} failed (a wrong result or an error)."]
    if bad:
        lines.append("  - wrong results: " + _listing(_case_label(r) for r in bad))
    bad_peers = [f"{_case_label(r)} {name}" for r in results for name, p in r.peers.items()
                 if not p.why and not p.ok]
    if bad_peers:
        lines.append("- peers whose output failed the check (their times are not compared): "
                     + _listing(bad_peers))
    timed = [r for r in results if r.ok and r.peer_s]
    for cond in ("dram", "hot"):
        if not timed:
            break
        slower = sorted((r for r in timed if r.peer_timing(condition=cond).best_s
                         < r.ours[cond].best_s),
                        key=lambda r: r.peer_timing(condition=cond).best_s / r.ours[cond].best_s)
        lines.append(f"- {cond}: ours at least as fast as {peer}: {len(timed) - len(slower)} of "
                     f"{len(timed)}.")
        if slower:
            lines.append(f"  - slower than {peer}, slowest first (speedup): " + _listing(
                f"{_case_label(r)} "
                f"({r.peer_timing(condition=cond).best_s / r.ours[cond].best_s:.2f}x)"
                for r in slower))
        if any(len(r.peers) > 1 for r in timed):
            beaten = []
            for r in timed:
                name, sec = best_peer(r, cond)
                if name and sec < r.ours[cond].best_s:
                    beaten.append((sec / r.ours[cond].best_s, f"{_case_label(r)} by {name} "
                                   f"({sec / r.ours[cond].best_s:.2f}x)"))
            lines.append(f"  - ours at least as fast as every peer: {len(timed) - len(beaten)} "
                         f"of {len(timed)}" + (": slower in " + _listing(
                             t for _, t in sorted(beaten)) if beaten else "."))
    big = [r for r in results if r.ok and r.nbytes >= TARGET_BYTES]
    if big:
        low = sorted((r for r in big if r.nbytes / r.ours_s / 1e9 < TARGET_FRACTION
                      * ceiling_gbps), key=lambda r: r.ours_s / r.nbytes, reverse=True)
        lines.append(f"- cases moving >= {fmt_bytes(TARGET_BYTES)} at >= "
                     f"{TARGET_FRACTION:.0%} of the ceiling (dram): {len(big) - len(low)} of "
                     f"{len(big)}.")
        if low:
            lines.append("  - below, lowest first (% of ceiling): " + _listing(
                f"{_case_label(r)} ({100 * r.nbytes / r.ours_s / 1e9 / ceiling_gbps:.0f}%)"
                for r in low))
    return lines


def peer_names(results):
    return list(dict.fromkeys(name for r in results for name in r.peers))


def _results_table(results, ceiling_gbps):
    names = peer_names(results)
    has_graph = any(r.ours["dram"].graph_s is not None for r in results)
    head = ["op", "case", "dtype", "kernel", "moved", "sets", "cond", "ours", "GB/s",
            "% ceiling"] + names + ["best peer"]
    align = ["---"] * 4 + ["---:"] * 2 + ["---"] + ["---:"] * (4 + len(names))
    if has_graph:
        head += ["ours loop"]
        align += ["---:"]
    head.append("check")
    align.append("---")
    lines = ["| " + " | ".join(head) + " |", "|" + "|".join(align) + "|"]
    for r in results:
        for cond in ("dram", "hot"):
            t = r.ours[cond]
            gbps = r.nbytes / t.best_s / 1e9
            cells = [r.op, r.case, r.dtype, f"`{r.kernel}`" if r.kernel else "-",
                     fmt_bytes(r.nbytes), str(r.sets if cond == "dram" else 1), cond,
                     fmt_time(t.best_s), f"{gbps:.0f}", f"{100 * gbps / ceiling_gbps:.0f}%"]
            cells += [peer_cell(r, name, cond) for name in names]
            name, sec = best_peer(r, cond)
            cells.append(f"{sec / t.best_s:.2f}x {name}" if name else "-")
            if has_graph:
                cells.append(fmt_time(t.loop_s))
            cells.append(("ok" if r.ok else f"FAIL: {_md(r.message)}") if cond == "dram" else "")
            lines.append("| " + " | ".join(cells) + " |")
    return lines


def peer_cell(r, name, cond):
    """A peer's time in one condition: "-" when not in this case's op, "n/a", "FAIL"."""
    p = r.peers.get(name)
    if p is None:
        return "-"
    if p.why:
        return "n/a"
    return fmt_time(p.times[cond].best_s) + ("" if p.ok else " FAIL")


IMPL_COLORS = {"ours": "black", "numpy": "C1", "torch": "C1", "compile": "C2", "triton": "C3",
               "quack": "C4"}
FAMILY_MARKERS = "osD^vP*Xhp<>8d"


def write_bandwidth_plot(path, results, ceiling, title):
    """Achieved GB/s against bytes moved (log x), a row of panels per (operator, dtype) and a
    column per condition (dram, hot). Colour: the implementation (ours, each peer); marker: the
    shape family (BenchResult.family): points are joined only within one family and one
    implementation; the copy ceiling is the dotted line. Returns None, or why the plot was
    not written."""
    try:
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
        from matplotlib.lines import Line2D
        from matplotlib.ticker import FuncFormatter
    except ImportError as exc:
        return f"matplotlib is not installed ({exc}); pip install matplotlib"
    timed = [r for r in results if r.ok]
    if not timed:
        return "no case passed its check"
    panels = list(dict.fromkeys((r.op, r.dtype) for r in timed))
    conds = ("dram", "hot")
    fig, axes = plt.subplots(len(panels), 2, figsize=(13, 3.8 * len(panels)), sharey="row",
                             squeeze=False)
    for row, (op, dtype) in enumerate(panels):
        cases = [r for r in timed if r.op == op and r.dtype == dtype]
        families = list(dict.fromkeys(r.family for r in cases))
        markers = {f: FAMILY_MARKERS[i % len(FAMILY_MARKERS)] for i, f in enumerate(families)}
        impls = ["ours"] + peer_names(cases)
        for col, cond in enumerate(conds):
            ax = axes[row][col]
            for impl in impls:
                color = IMPL_COLORS.get(impl, f"C{5 + impls.index(impl) % 5}")
                for fam in families:
                    pts = []
                    for r in cases:
                        if r.family != fam:
                            continue
                        if impl == "ours":
                            t = r.ours[cond]
                        else:
                            p = r.peers.get(impl)
                            t = p.times.get(cond) if p and not p.why and p.ok else None
                        if t is not None:
                            pts.append((r.nbytes, r.nbytes / t.best_s / 1e9))
                    if not pts:
                        continue
                    x, y = zip(*sorted(pts))
                    ax.plot(x, y, marker=markers[fam], ms=4 if impl == "ours" else 3,
                            lw=1.4 if impl == "ours" else 0.8, ls="-" if impl == "ours" else "--",
                            alpha=1.0 if impl == "ours" else 0.7, color=color)
            ax.axhline(ceiling.gbps, color="gray", ls=":", lw=1.2)
            ax.set_xscale("log", base=2)
            ax.xaxis.set_major_formatter(FuncFormatter(lambda v, _: fmt_bytes(int(v))))
            ax.tick_params(axis="x", labelrotation=45, labelsize=7)
            ax.set_title(f"{op} {dtype}, {cond}", fontsize=9)
            ax.grid(True, which="major", alpha=0.3)
            if row == len(panels) - 1:
                ax.set_xlabel("bytes moved (inputs read once + output written once)")
        axes[row][0].set_ylabel("GB/s")
        handles = [Line2D([], [], color=IMPL_COLORS.get(i, "C5"), ls="-" if i == "ours" else "--",
                          label=i) for i in impls]
        handles += [Line2D([], [], color="gray", marker=markers[f], ls="none", label=f)
                    for f in families]
        handles.append(Line2D([], [], color="gray", ls=":",
                              label=f"copy ceiling {ceiling.gbps:.0f} GB/s"))
        axes[row][1].legend(handles=handles, loc="upper left", bbox_to_anchor=(1.02, 1.0),
                            fontsize=7)
    fig.suptitle(f"Achieved bandwidth: {title}", fontsize=10)
    fig.tight_layout()
    fig.savefig(path, dpi=100, bbox_inches="tight")
    plt.close(fig)
    return None
