#!/usr/bin/env python3
"""The launch check: the NVIDIA backend's host code run without a GPU.

camp_launch_cases drives every operator through camp_ops_standin (the library's
objects on a stand-in CUDA runtime that runs nothing and prints each launch).
This script gives the stand-in each kernel's resources (registers, static
shared memory, thread bound, parameter sizes: `cuobjdump` over the fatbins),
runs the cases as each stand-in GPU, and checks every launch as the GPU would
refuse it or as it could fault:

- the kernel is one of the library's; grid and block within the limits; the
  block within the kernel's thread bound and register file;
- dynamic shared memory within what the kernel was allowed
  (cudaFuncSetAttribute) and the GPU's per-block limit;
- clusters only on a GPU that has them (compute capability 9.0 or newer),
  dividing the grid, of at most 8 blocks (16 where the kernel allowed it); a
  cooperative grid fits on the GPU at once;
- every pointer among the arguments lies within one of the case's buffers
  (its end included), and every memset within the workspace: the cases run
  twice, their buffers moved between the runs, and an argument word that
  moves with them is a pointer;
- no execute fails where the descriptor was created, and a ladder step
  declines a case only as not supported;
- a kernel launched overlapped with the kernel before it (programmatic
  dependent launch) waits for that kernel (griddepcontrol.wait, from
  gpu::enter_overlapped_kernel) before its first global-memory access, read
  in the PTX the library carries: one that reads or writes first could see
  the previous kernel's output half written;
- every kernel in the library is launched by some case on some GPU: a kernel
  no case reaches is compiled for nothing (or reached only by a device or
  shape no case covers: then a case is missing).

It prints one summary line per GPU, then (all GPUs checked) the kernels no
case launched, and exits 1 on any problem. --log DIR
keeps each GPU's launch log: two builds' logs diff to the launches a change
of host code alters (none, for a change that moves code only).
"""
import argparse
import os
import re
import struct
import subprocess
import sys
import tempfile
from pathlib import Path

GPUS = {  # as standin_cudart.cc: SMs, cc major, per-block shared memory limit, per-SM shared memory
    "h200": (132, 9, 232448, 233472),
    "h100-pcie": (114, 9, 232448, 233472),
    "a100": (108, 8, 166912, 167936),
}
# The cases run twice, their buffers at these two bases (CAMP_LAUNCH_BASE): the argument words
# that differ by exactly the move are pointers.
BASE, MOVED_BASE = 0x7000 << 32, 0x7800 << 32


def kernel_table(cuobjdump, library):
    """name -> [registers, static shared memory, thread bound, [parameter sizes]]."""
    kernels = {}

    def entry(name):
        return kernels.setdefault(name, [0, 0, 1024, {}])

    usage = subprocess.run([cuobjdump, "--dump-resource-usage", library], capture_output=True, text=True, check=True)
    name = None
    for line in usage.stdout.splitlines():
        m = re.match(r"\s*Function (\S+):", line)
        if m:
            name = m.group(1)
            entry(name)
            continue
        m = re.search(r"REG:(\d+).*SHARED:(\d+)", line)
        if m and name:
            kernels[name][0], kernels[name][1] = int(m.group(1)), int(m.group(2))
    elf = subprocess.run([cuobjdump, "-elf", library], capture_output=True, text=True, check=True)
    name = attribute = None
    for line in elf.stdout.splitlines():
        m = re.match(r"^\.nv\.info\.(\S+)$", line)
        if m:
            name = m.group(1)
            entry(name)
            continue
        if line.startswith("."):
            name = None
            continue
        m = re.match(r"\s*Attribute:\s*(\S+)", line)
        if m:
            attribute = m.group(1)
            continue
        if name is None:
            continue
        m = re.search(r"Ordinal : 0x([0-9a-f]+)\s+Offset\s*: 0x[0-9a-f]+\s+Size\s*: 0x([0-9a-f]+)", line)
        if m and attribute == "EIATTR_KPARAM_INFO":
            kernels[name][3][int(m.group(1), 16)] = int(m.group(2), 16)
            continue
        m = re.match(r"\s*Value:\s*0x([0-9a-f]+) 0x[0-9a-f]+ 0x[0-9a-f]+", line)
        if m and attribute == "EIATTR_MAX_THREADS":
            kernels[name][2] = int(m.group(1), 16)
    for k in kernels.values():
        k[3] = [k[3][i] for i in sorted(k[3])]
    return kernels


# PTX instructions that may read or write global memory: loads, stores, atomics, reductions and
# prefetches outside the parameter, shared, local and constant spaces (a generic address may be
# global), and the asynchronous copies from or to global memory.
_NOT_GLOBAL = (".param", ".shared", ".local", ".const")


def _global_access(op):
    if op.startswith(("cp.async", "cp.reduce.async")):  # not their commits, waits and arrivals
        return ".global" in op or ".tensor" in op
    if op.startswith(("st.async", "red.async")):  # to another block's shared memory
        return False
    base = op.split(".", 1)[0]
    return base in ("ld", "st", "atom", "red", "prefetch", "prefetchu") and not any(s in op for s in _NOT_GLOBAL)


def wait_order(ptx):
    """name -> (line of the kernel's first griddepcontrol.wait or None, line of its first
    global-memory access or None, that access), over the .entry functions of PTX text."""
    entries, name = {}, None
    for number, line in enumerate(ptx.splitlines()):
        m = re.match(r"\s*\.(?:visible\s+)?\.?entry\s+(\S+?)\s*\(", line)
        if m:
            name = m.group(1)
            entries[name] = [None, None, ""]
            continue
        if name is None:
            continue
        text = line.split("//", 1)[0].strip()
        if not text or text.startswith((".", "{", "}", "$")):
            continue
        op = re.sub(r"^@!?%\w+\s+", "", text).split(None, 1)[0].rstrip(";")
        entry = entries[name]
        if op == "griddepcontrol.wait" and entry[0] is None:
            entry[0] = number
        elif entry[1] is None and _global_access(op):
            entry[1], entry[2] = number, text
    return {n: tuple(e) for n, e in entries.items()}


def blocks_per_sm(kernel, threads, smem, gpu):
    regs, static, bound, _ = kernel
    if threads <= 0 or threads > bound:
        return 0
    warps = (threads + 31) // 32
    n = min(64 // warps, 32)
    per_warp = (regs * 32 + 255) // 256 * 256
    if per_warp:
        n = min(n, 65536 // per_warp // warps)
    return min(n, GPUS[gpu][3] // (static + smem + 1024))


LAUNCH = re.compile(r"launch (\S+) grid=(\d+),(\d+),(\d+) block=(\d+),(\d+),(\d+) smem=(\d+) stream=\S+(.*?) args=(.*)$")


def pointer_words(args, moved_args):
    """The 8-byte argument words that moved with the buffers: the pointers, as in the first run."""
    for arg, moved in zip(args.split("|") if args else [], moved_args.split("|") if moved_args else []):
        raw, moved_raw = bytes.fromhex(arg), bytes.fromhex(moved)
        for offset in range(0, min(len(raw), len(moved_raw)) - 7, 8):
            value = struct.unpack_from("<Q", raw, offset)[0]
            if struct.unpack_from("<Q", moved_raw, offset)[0] - value == MOVED_BASE - BASE:
                yield value


def check(log, moved_log, kernels, gpu, waits=None):
    """(problems, cases, launches, kernel names launched) of a run's log and of the run with
    the buffers moved; `waits` (wait_order of the library's PTX), where given, judges the
    overlapped launches."""
    sms, cc_major, block_limit, _ = GPUS[gpu]
    problems, launched = [], set()
    cases = launches = 0
    case, buffers, allowed, large_clusters = "", {}, {}, set()

    def problem(what):
        problems.append(f"{case}: {what}")

    lines, moved_lines = log.splitlines(), moved_log.splitlines()
    if len(lines) != len(moved_lines):
        problems.append("the run with the buffers moved printed another number of lines")
    for line, moved_line in zip(lines, moved_lines):
        same = (line.split(" args=")[0] == moved_line.split(" args=")[0] if line.startswith("launch ")
                else line == moved_line if line.startswith(("CASE ", "  ", "setattr "))
                else line.split(" ", 1)[0] == moved_line.split(" ", 1)[0])
        if not same:  # where the buffers are must not change what runs
            problem(f"the run with the buffers moved differs: {moved_line.strip()}")
            continue
        if line.startswith("CASE "):
            case, buffers, cases = line[5:], {}, cases + 1
            continue
        if line.startswith("BUFFER "):
            _, name, first, end = line.split()
            buffers[name] = (int(first, 16), int(end, 16))
            continue
        if line.startswith("setattr "):
            _, name, attribute, value = line.split()
            if attribute == "8":  # cudaFuncAttributeMaxDynamicSharedMemorySize
                allowed[name] = int(value)
            if attribute == "14" and value == "1":  # cudaFuncAttributeNonPortableClusterSizeAllowed
                large_clusters.add(name)
            continue
        if line.startswith("memset "):
            _, ptr, _, size, _ = line.split()
            first, end = buffers.get("workspace", (0, 0))
            if not first <= int(ptr, 16) <= int(ptr, 16) + int(size) <= end:
                problem(f"memset of {size} bytes at {ptr} outside the workspace")
            continue
        if "ERROR" in line or line.startswith("standin:") or (
                "declined:" in line and "OPRT_ERR_NOT_SUPPORTED" not in line):
            problem(line.strip())  # a ladder step may decline a case, but only as not supported
            continue
        m = LAUNCH.match(line)
        if not m:
            continue
        launches += 1
        name = m.group(1)
        grid = [int(m.group(i)) for i in (2, 3, 4)]
        block = [int(m.group(i)) for i in (5, 6, 7)]
        smem, attrs, args = int(m.group(8)), m.group(9), m.group(10)
        if name not in kernels:
            problem(f"launch of an unknown kernel {name}")
            continue
        launched.add(name)
        kernel = kernels[name]
        regs, static, bound, _ = kernel
        threads = block[0] * block[1] * block[2]
        if min(grid) < 1 or grid[0] >= 2**31 or max(grid[1:]) > 65535:
            problem(f"{name}: grid {grid}")
        if threads < 1 or threads > min(bound, 1024):
            problem(f"{name}: {threads} threads a block, bound {bound}")
        if regs * threads > 65536:
            problem(f"{name}: {regs} registers x {threads} threads")
        limit = allowed.get(name, 48 * 1024 - static)
        if smem > limit or static + smem > block_limit:
            problem(f"{name}: {smem} bytes of dynamic shared memory, allowed {limit}")
        cluster = re.search(r"cluster=(\d+),(\d+),(\d+)", attrs)
        if cluster and cc_major < 9:
            problem(f"{name}: clusters on a GPU without them (compute capability {cc_major})")
        if cluster and grid[0] % int(cluster.group(1)):
            problem(f"{name}: grid {grid[0]} not a multiple of cluster {cluster.group(1)}")
        if cluster and int(cluster.group(1)) > (16 if name in large_clusters else 8):
            problem(f"{name}: clusters of {cluster.group(1)} blocks (above 8 the kernel must allow it; 16 at most)")
        if waits is not None and "overlapped=1" in attrs and name in waits:  # (a kernel without PTX: not judged)
            wait, access, text = waits[name]
            if wait is None:
                problem(f"{name}: launched overlapped but never waits for the previous kernel "
                        "(gpu::enter_overlapped_kernel first)")
            elif access is not None and access < wait:
                problem(f"{name}: launched overlapped but accesses global memory ({text}) before it waits "
                        "for the previous kernel (gpu::enter_overlapped_kernel first)")
        if "cooperative=1" in attrs and grid[0] * grid[1] * grid[2] > blocks_per_sm(kernel, threads, smem, gpu) * sms:
            problem(f"{name}: cooperative grid {grid} larger than the GPU holds")
        moved = LAUNCH.match(moved_line)
        for value in pointer_words(args, moved.group(10) if moved else ""):
            if not any(f <= value <= e for f, e in buffers.values()):
                problem(f"{name}: argument pointer {value:#x} outside the case's buffers")
    return problems, cases, launches, launched


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--build", required=True, help="an NVIDIA build folder (camp_launch_cases built)")
    ap.add_argument("--cuobjdump", default="cuobjdump")
    ap.add_argument("--gpu", action="append", choices=sorted(GPUS), help="stand-in GPUs (default: all)")
    ap.add_argument("--log", help="a folder to keep each GPU's launch log in")
    a = ap.parse_args()
    build = Path(a.build)
    cases_bin = build / "tests/cpp/nvidia/camp_launch_cases"
    library = build / "tests/cpp/nvidia/libcamp_ops_standin.so"
    kernels = kernel_table(a.cuobjdump, str(library))
    ptx = subprocess.run([a.cuobjdump, "-ptx", str(library)], capture_output=True, text=True, check=True)
    waits = wait_order(ptx.stdout)
    failed = False
    launched_anywhere = set()
    with tempfile.TemporaryDirectory() as tmp:
        table = Path(tmp) / "kernels.txt"
        table.write_text("".join(f"{n} {r} {s} {b} {','.join(map(str, p)) or '-'}\n"
                                 for n, (r, s, b, p) in sorted(kernels.items())))
        for gpu in a.gpu or list(GPUS):
            runs = [subprocess.run([str(cases_bin)], capture_output=True, text=True,
                                   env=dict(os.environ, CAMP_STANDIN_GPU=gpu, CAMP_STANDIN_KERNELS=str(table),
                                            CAMP_LAUNCH_BASE=f"{base:x}"))
                    for base in (BASE, MOVED_BASE)]
            if a.log:
                Path(a.log).mkdir(parents=True, exist_ok=True)
                (Path(a.log) / f"launches-{gpu}.log").write_text(runs[0].stderr)
            problems, cases, launches, launched = check(runs[0].stderr, runs[1].stderr, kernels, gpu, waits)
            for run in runs:
                if run.returncode != 0 or not run.stderr.rstrip().endswith("END"):
                    problems.append(f"camp_launch_cases exited with {run.returncode} before its end")
            if not launches:
                problems.append("nothing was launched")
            for p in problems[:20]:
                print(f"  {p}")
            if len(problems) > 20:
                print(f"  ... and {len(problems) - 20} more")
            overlapped = {m.group(1) for m in map(LAUNCH.match, runs[0].stderr.splitlines())
                          if m and "overlapped=1" in m.group(9)}
            print(f"launch check ({gpu}): {cases} cases, {launches} launches, {len(launched)} of "
                  f"{len(kernels)} kernels launched ({len(overlapped)} overlapped, "
                  f"{len(overlapped & set(waits))} of them judged from their PTX), {len(problems)} problems")
            failed |= bool(problems)
            launched_anywhere |= set(launched)
    if a.gpu:  # some stand-ins only: another may launch what these did not
        return 1 if failed else 0
    never = sorted(set(kernels) - launched_anywhere)
    print(f"launch check: {len(never)} of {len(kernels)} kernels launched on none of the stand-in GPUs"
          + "".join(f"\n  {name}" for name in demangle(never)))
    if never:
        print("  a kernel no case launches is compiled for nothing: remove it, or add the case that reaches it")
    return 1 if failed or never else 0


def demangle(names):
    """The names as c++filt prints them, where it is installed."""
    try:
        out = subprocess.run(["c++filt"], input="\n".join(names), capture_output=True, text=True, check=True)
        return out.stdout.split("\n")[:len(names)]
    except (OSError, subprocess.CalledProcessError):
        return names


if __name__ == "__main__":
    sys.exit(main())
