"""Result tables printed row by row as results arrive, and the benchmark report
(performance.md and the roofline plot roofline.png) that run_ops --report writes."""

import datetime
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
# performance.md and roofline.png

TARGET_BYTES = 256 << 20  # the performance issue's ">= 256 MiB moved" cases
TARGET_FRACTION = 0.95


def write_report(directory, env, command, ceiling, results, failures, *, peer, seed, wall_s,
                 timing_note):
    """Writes directory/performance.md and directory/roofline.png (the PNG only when
    matplotlib is importable; the reason is printed and recorded otherwise). `results` are
    BenchResults; `failures` are (op, case, dtype, message) of cases that raised."""
    directory = Path(directory)
    directory.mkdir(parents=True, exist_ok=True)
    png = directory / "roofline.png"
    title = f"{env['backend']} on {env['device']}, {env['date']}"
    plot_problem = write_roofline(png, results, ceiling, peer, title)
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
    if "driver" in env:
        lines.append(f"| driver | {env['driver']} |")
    if "torch" in env:
        lines.append(f"| torch | {env['torch']} |")
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
    lines += ["", "## Roofline", ""]
    if plot_problem:
        lines.append(f"roofline.png was not written: {plot_problem}.")
    else:
        lines.append(f"![GB/s against bytes moved; solid: ours, dashed: {peer}; dotted: the copy "
                     f"ceiling](roofline.png)")
    lines += ["", "## Results", ""]
    lines += _results_table(results, gbps, peer)
    if failures:
        lines += ["", "## Cases that failed to run", "", "| op | case | dtype | error |",
                  "|---|---|---|---|"]
        lines += [f"| {op} | {case} | {dtype} | {_md(msg)} |" for op, case, dtype, msg in failures]
    path = directory / "performance.md"
    path.write_text("\n".join(lines) + "\n")
    print(f"report: wrote {path}" + ("" if plot_problem else f" and {png}"), flush=True)
    return path


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
    timed = [r for r in results if r.ok]
    if timed:
        slower = sorted((r for r in timed if r.speedup < 1.0), key=lambda r: r.speedup)
        lines.append(f"- ours at least as fast as {peer}: {len(timed) - len(slower)} of "
                     f"{len(timed)}.")
        if slower:
            lines.append(f"  - slower than {peer}, slowest first (speedup): " + _listing(
                f"{_case_label(r)} ({r.speedup:.2f}x)" for r in slower))
        big = [r for r in timed if r.nbytes >= TARGET_BYTES]
        if big:
            low = sorted((r for r in big if r.nbytes / r.ours_s / 1e9 < TARGET_FRACTION
                          * ceiling_gbps), key=lambda r: r.ours_s / r.nbytes, reverse=True)
            lines.append(f"- cases moving >= {fmt_bytes(TARGET_BYTES)} at >= "
                         f"{TARGET_FRACTION:.0%} of the ceiling: {len(big) - len(low)} of "
                         f"{len(big)}.")
            if low:
                lines.append("  - below, lowest first (% of ceiling): " + _listing(
                    f"{_case_label(r)} ({100 * r.nbytes / r.ours_s / 1e9 / ceiling_gbps:.0f}%)"
                    for r in low))
    return lines


def _results_table(results, ceiling_gbps, peer):
    has_graph = any(r.ours.graph_s is not None for r in results)
    head = ["op", "case", "dtype", "kernel", "moved", "sets", "ours", "GB/s", "% ceiling", peer,
            f"{peer} GB/s", "speedup"]
    align = ["---"] * 4 + ["---:"] * 8
    if has_graph:
        head += ["ours loop", f"{peer} loop"]
        align += ["---:"] * 2
    head.append("check")
    align.append("---")
    lines = ["| " + " | ".join(head) + " |", "|" + "|".join(align) + "|"]
    for r in results:
        ours_gbps = r.nbytes / r.ours_s / 1e9
        cells = [r.op, r.case, r.dtype, f"`{r.kernel}`" if r.kernel else "-", fmt_bytes(r.nbytes),
                 str(r.sets), fmt_time(r.ours_s), f"{ours_gbps:.0f}",
                 f"{100 * ours_gbps / ceiling_gbps:.0f}%", fmt_time(r.peer_s),
                 f"{r.nbytes / r.peer_s / 1e9:.0f}", f"{r.speedup:.2f}x"]
        if has_graph:
            cells += [fmt_time(r.ours.loop_s), fmt_time(r.peer.loop_s)]
        cells.append("ok" if r.ok else f"FAIL: {_md(r.message)}")
        lines.append("| " + " | ".join(cells) + " |")
    return lines


def write_roofline(path, results, ceiling, peer, title):
    """GB/s against bytes moved (log x), one panel per dtype, one line per series (operator
    or operator variant): solid ours, dashed the peer; the copy ceiling as a dotted line.
    Returns None, or why the plot was not written."""
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
    dtypes = list(dict.fromkeys(r.dtype for r in timed))
    series = list(dict.fromkeys(r.series for r in timed))
    colors = {s: f"C{i % 10}" for i, s in enumerate(series)}
    fig, axes = plt.subplots(1, len(dtypes), figsize=(6 * len(dtypes), 5), sharey=True,
                             squeeze=False)
    for ax, dtype in zip(axes[0], dtypes):
        for s in series:
            pts = sorted((r.nbytes, r.nbytes / r.ours_s / 1e9, r.nbytes / r.peer_s / 1e9)
                         for r in timed if r.dtype == dtype and r.series == s)
            if not pts:
                continue
            x, ours, theirs = zip(*pts)
            ax.plot(x, ours, marker="o", ms=3, lw=1.4, color=colors[s])
            ax.plot(x, theirs, marker=".", ms=2, lw=0.8, ls="--", alpha=0.6, color=colors[s])
        ax.axhline(ceiling.gbps, color="black", ls=":", lw=1.2)
        ax.set_xscale("log", base=2)
        ax.xaxis.set_major_formatter(FuncFormatter(lambda v, _: fmt_bytes(int(v))))
        ax.tick_params(axis="x", labelrotation=45)
        ax.set_xlabel("bytes moved (inputs read once + output written once)")
        ax.set_title(dtype)
        ax.grid(True, which="major", alpha=0.3)
    axes[0][0].set_ylabel("GB/s")
    handles = [Line2D([], [], color=colors[s], marker="o", ms=3, label=s) for s in series]
    handles += [Line2D([], [], color="gray", ls="--", label=f"dashed: {peer}"),
                Line2D([], [], color="black", ls=":",
                       label=f"copy ceiling {ceiling.gbps:.0f} GB/s ({ceiling.source})")]
    fig.suptitle(title, fontsize=10)
    fig.tight_layout()
    fig.legend(handles=handles, loc="upper left", bbox_to_anchor=(1.0, 0.92), fontsize=8)
    fig.savefig(path, dpi=110, bbox_inches="tight")
    plt.close(fig)
    return None
