#!/usr/bin/env python3
"""Are a kernel's global loads in flight together? A count read from its SASS, no GPU needed.

A thread that loads several vectors should issue every load before it uses any loaded value:
then one trip to memory covers them all. Whether it does is decided by nvcc and ptxas, not by
the order of the source lines, and shows only in the machine code. For each kernel this script
follows the registers that global loads (LDG) write and prints:

- loads: the LDG instructions in the kernel,
- before first use: the loads issued before the first instruction that reads a loaded register,
- runs: the loads issued between one such use and the next, in code order (a loop body that
  loads R vectors and then adds them shows R; "8, 2, 2" means the last loads waited for adds).

    cd build-nvidia
    nvcc -cubin -O3 -arch=sm_90 -DOPRT_WITH_NVIDIA --options-file CMakeFiles/camp_ops.dir/includes_CUDA.rsp \\
         --expt-relaxed-constexpr -std=c++17 ../ops/softmax/nvidia/softmax_cuda.cu -o /tmp/sm.cubin
    python3 ../scripts/perf/sass_loads.py /tmp/sm.cubin --kernel rows_registers

FILE is a cubin or any binary with device code (libcamp_ops.so, a bench; read with cuobjdump
-sass), or the text cuobjdump -sass printed. cuobjdump (and the nvdisasm it runs) come with the
CUDA toolkit, or from PyPI (`pip install nvidia-cuda-cuobjdump nvidia-cuda-nvdisasm`);
--cuobjdump names one. docs/kernels/profiling.md shows what the count found.
"""

import argparse
import re
import shutil
import subprocess
import sys
from pathlib import Path

_FUNCTION = re.compile(r"^\s*Function : (\S+)")
_INSTRUCTION = re.compile(r"^\s*/\*[0-9a-f]{4,}\*/\s+(.*?)\s*;")
_REGISTER = re.compile(r"\bR(\d+)\b")
_WIDTH = {"128": 4, "64": 2}  # registers an LDG of that many bits writes


def parse_sass(text):
    """{kernel name: [instruction text, ...]} of cuobjdump -sass output."""
    kernels, current = {}, None
    for line in text.splitlines():
        m = _FUNCTION.match(line)
        if m:
            current = kernels.setdefault(m.group(1), [])
            continue
        m = _INSTRUCTION.match(line)
        if m and current is not None:
            current.append(m.group(1))
    return kernels


def _split(instruction):
    """(opcode with its modifiers, [operands]) of one instruction, its predicate dropped."""
    body = re.sub(r"^@!?U?P\w+\s+", "", instruction.strip())
    opcode, _, rest = body.partition(" ")
    operands = [o.strip() for o in rest.split(",")] if rest else []
    return opcode, operands


def _registers(operand):
    return {int(r) for r in _REGISTER.findall(operand)}


def load_runs(instructions):
    """(loads, runs): the LDGs of one kernel and the loads issued between uses of loaded values."""
    pending = set()  # registers written by loads and not yet read
    runs, current, loads = [], 0, 0
    for instruction in instructions:
        opcode, operands = _split(instruction)
        if not operands:
            continue
        dest, sources = operands[0], operands[1:]
        if opcode.split(".")[0] == "LDG":  # not LDGSTS (shared memory) nor LDGDEPBAR
            # The address of a load may itself come from a load (a use); its target is new.
            if any(_registers(s) & pending for s in sources):
                runs.append(current)
                current = 0
                pending.clear()
            width = next((w for bits, w in _WIDTH.items() if f".{bits}" in opcode), 1)
            first = min(_registers(dest), default=None)
            if first is not None:
                pending.update(range(first, first + width))
            loads += 1
            current += 1
            continue
        read = set().union(*(_registers(s) for s in sources)) if sources else set()
        if opcode.startswith(("ST", "RED", "ATOM")):  # stores read their "destination" too
            read |= _registers(dest)
        if read & pending:
            if current:
                runs.append(current)
            current = 0
            pending.clear()
        else:
            pending -= _registers(dest)  # overwritten unread
    if current:
        runs.append(current)
    return loads, runs


def report(kernels, pattern=None, out=sys.stdout):
    """Prints one line per kernel matching `pattern` (a regex) and returns {name: (loads, runs)}."""
    rx = re.compile(pattern) if pattern else None
    found = {}
    for name, instructions in kernels.items():
        if rx and not rx.search(name):
            continue
        loads, runs = load_runs(instructions)
        if loads == 0:
            continue
        found[name] = (loads, runs)
        first = runs[0] if runs else 0
        shown = ", ".join(map(str, runs[:8])) + (", ..." if len(runs) > 8 else "")
        out.write(f"{loads:4d} loads, {first:3d} before first use, runs {shown:24s} {name}\n")
    return found


def find_cuobjdump(given=None):
    """cuobjdump: --cuobjdump, the PATH, or the one of the nvidia-cuda-cuobjdump wheel."""
    if given:
        return given
    on_path = shutil.which("cuobjdump")
    if on_path:
        return on_path
    for folder in map(Path, sys.path):
        for candidate in sorted(folder.glob("nvidia/cu*/bin/cuobjdump")):
            return str(candidate)
    return None


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("file", help="a cubin, a binary with device code, or cuobjdump -sass text")
    ap.add_argument("--kernel", help="only kernels whose (mangled) name matches this regex")
    ap.add_argument("--cuobjdump", help="the cuobjdump to run (default: PATH, then the PyPI wheel)")
    args = ap.parse_args(argv)
    path = Path(args.file)
    if not path.is_file():
        sys.exit(f"sass_loads: no file {path}")
    data = path.read_bytes()
    if b"\0" not in data[:4096]:  # already the SASS text
        text = data.decode(errors="replace")
    else:
        tool = find_cuobjdump(args.cuobjdump)
        if tool is None:
            sys.exit("sass_loads: no cuobjdump: install the CUDA toolkit's, or `pip install "
                     "nvidia-cuda-cuobjdump nvidia-cuda-nvdisasm`, or name one with --cuobjdump")
        run = subprocess.run([tool, "-sass", str(path)], capture_output=True, text=True)
        if run.returncode != 0:  # e.g. no nvdisasm beside it: pip install nvidia-cuda-nvdisasm
            sys.exit(f"sass_loads: {tool} -sass failed: {run.stderr.strip()}")
        text = run.stdout
    if not report(parse_sass(text), args.kernel):
        sys.exit(f"sass_loads: no kernel with global loads{' matching ' + args.kernel if args.kernel else ''} in {path}")


if __name__ == "__main__":
    main()
