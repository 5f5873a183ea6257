#!/usr/bin/env python3
"""The instruction mix of the loops in a SASS listing (cuobjdump -sass), per kernel.

    cuobjdump -sass camp_sgemm_bench > bench.sass
    python3 sass_mix.py bench.sass [--match SUBSTR]     # per kernel: each loop's size, FFMA share, top opcodes
    python3 sass_mix.py bench.sass --dump SUBSTR        # the SASS of the kernels whose name holds SUBSTR

A loop is the span from a backward branch's target to the branch. The counts are static: a
loop body with branches (a bounds-checked load and its scalar fallback) counts both sides, so
its FFMA share is a lower bound of what runs. For a SIMT matmul whose issue slots are the
limit, the FFMA share of the hot loop bounds the fraction of peak FMA rate it can reach.
"""
import collections
import re
import sys


def functions(path):
    funcs, cur, text = {}, None, {}
    for line in open(path, errors="replace"):
        m = re.match(r"\s+Function : (\S+)", line)
        if m:
            cur = m.group(1)
            funcs[cur], text[cur] = [], [line]
            continue
        if cur is None:
            continue
        text[cur].append(line)
        m = re.match(r"\s+/\*([0-9a-f]{4,})\*/\s+(.*?);", line)
        if m:
            funcs[cur].append((int(m.group(1), 16), m.group(2).strip()))
    return funcs, text


def opcode(ins):
    ins = re.sub(r"^@!?U?P\w+\s+", "", ins)
    return ins.split()[0].split(".")[0]


def main():
    args = sys.argv[1:]
    if not args:
        print(__doc__)
        return 1
    funcs, text = functions(args[0])
    if "--dump" in args:
        want = args[args.index("--dump") + 1]
        for name in funcs:
            if want in name:
                # without the lines that hold only an instruction's encoding
                sys.stdout.write("".join(l for l in text[name] if not re.match(r"\s+/\* 0x[0-9a-f]+ \*/\s*$", l)))
        return 0
    match = args[args.index("--match") + 1] if "--match" in args else ""
    for name, ins in funcs.items():
        if match not in name:
            continue
        loops = []
        for addr, body in ins:
            m = re.search(r"BRA (?:`\(\.L_x_\d+\) )?0x([0-9a-f]+)", body)
            if m and int(m.group(1), 16) < addr:
                lo = int(m.group(1), 16)
                loops.append([x for x in ins if lo <= x[0] <= addr])
        loops = [b for b in loops if any(opcode(x[1]) == "FFMA" for x in b)]
        if not loops:
            continue
        print(f"{name}: {len(ins)} instructions")
        for body in loops:
            c = collections.Counter(opcode(x[1]) for x in body)
            n, ff = len(body), c["FFMA"]
            top = " ".join(f"{k}:{v}" for k, v in c.most_common(12))
            print(f"  loop {body[0][0]:#x}-{body[-1][0]:#x}: {n} instructions, FFMA {ff} ({100.0 * ff / n:.1f}%)  {top}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
