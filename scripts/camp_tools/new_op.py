"""`camp.py new-op NAME --kind elementwise|reduction`: generates a complete operator.

An operator is its entry in the manifest, ops/manifest.json, plus its own files. Every file
is rendered from scripts/camp_tools/templates/<kind>/ (the template's path is the file's path,
`__op__` standing for the name), and the entry is added to the manifest (rewritten whole, in
its one layout: python/operator_runtime/_manifest.py dump()). Everything that lists the
operators reads the manifest: the Python package, the tests and their references at run time,
the umbrella header and the C++ test table at configure time. The one other file rewritten is
README.md's operator table, a region generated from the manifest between two marker lines
(`--sync-readme` rewrites it alone). The generated operator is whole from the start: its
placeholder math (elementwise: the identity; reduction: a sum) is the same in the CPU
kernel, the GPU kernel and the float64 reference, so it builds and passes its tests before
anyone edits it.

Nothing is written unless everything can be: an existing operator of that name, an existing
target file or a missing README marker stops the run before any change.
"""

import argparse
import builtins
import copy
import importlib.util
import json
import keyword
import re
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
TEMPLATES = Path(__file__).resolve().parent / "templates"
KINDS = ("elementwise", "reduction")
NAME_RE = re.compile(r"^[a-z][a-z0-9]*(_[a-z0-9]+)*$")
MANIFEST = "ops/manifest.json"
README = "README.md"
TABLE_BEGIN = ("<!-- the operator table: generated from ops/manifest.json by "
               "`python3 scripts/camp.py new-op --sync-readme`; edit the manifest -->")
TABLE_END = "<!-- end of the operator table -->"

# The manifest entry of a generated operator, per kind (the placeholder math's peers).
_ENTRIES = {
    "elementwise": {
        "kind": "elementwise", "output": "out", "inputs": ["in"], "params": [],
        "dtypes": ["f32", "f16", "bf16"],
        "summary": "elementwise, generated with the identity as placeholder math: describe it here",
        "peers": {"numpy": "np.copyto", "torch": "Tensor.copy_"},
    },
    "reduction": {
        "kind": "reduction", "output": "out", "inputs": ["in"],
        "params": [{"name": "axis", "python": "dim", "c_type": "int64_t", "default": -1}],
        "dtypes": ["f32", "f16", "bf16"],
        "summary": "reduction over one axis, generated with a sum as placeholder math: "
                   "describe it here",
        "peers": {"numpy": "np.sum", "torch": "torch.sum"},
    },
}


class NewOpError(Exception):
    """A reason not to generate; nothing has been written."""


def substitutions(name):
    camel = "".join(part.capitalize() for part in name.split("_"))
    return {"@@op@@": name, "@@Op@@": camel, "@@OP@@": name.upper()}


def render(text, subs):
    for key, value in subs.items():
        text = text.replace(key, value)
    left = re.search(r"@@\w+@@", text)
    if left:
        raise NewOpError(f"template placeholder {left.group(0)} has no value")
    return text


def manifest_module(root):
    """python/operator_runtime/_manifest.py of `root`, loaded by path: the standard library
    only, without importing the package (which needs the manifest whole)."""
    spec = importlib.util.spec_from_file_location(
        "_camp_manifest", root / "python/operator_runtime/_manifest.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def read_manifest(root):
    """(the parsed JSON, its OpEntry tuple) of root's ops/manifest.json."""
    manifest = manifest_module(root)
    data = json.loads((root / MANIFEST).read_text())
    try:
        entries = manifest.parse(data)
    except manifest.ManifestError as exc:
        raise NewOpError(f"{MANIFEST}: {exc}") from None
    return data, entries


def existing_ops(root):
    return {entry.name for entry in read_manifest(root)[1]}


def check_name(name, root):
    if not NAME_RE.match(name):
        raise NewOpError(f"operator name {name!r}: use lower_case letters, digits and single "
                         f"underscores, starting with a letter (e.g. silu, reduce_max)")
    if keyword.iskeyword(name) or name in dir(builtins):
        raise NewOpError(f"operator name {name!r} is a Python keyword or builtin")
    if len(name) > 40:
        raise NewOpError(f"operator name {name!r} is longer than 40 characters")
    if name in existing_ops(root):
        raise NewOpError(f"operator {name!r} exists already ({MANIFEST} lists it)")


def readme_table(entries):
    """README.md's operator table, one row per manifest entry."""
    rows = ["| operator | C create arguments | dtypes | semantics | benchmark peers (numpy; torch) |",
            "|---|---|---|---|---|"]
    for e in entries:
        args = ", ".join(["desc", e.output, *e.inputs, *(f"{p.c_type} {p.name}" for p in e.params)])
        peers = "; ".join(f"`{e.peers[k]}`" for k in ("numpy", "torch") if k in e.peers)
        rows.append(f"| {e.name} | `({args})` | {', '.join(e.dtypes)} | {e.summary} | {peers} |")
    return "\n".join(rows) + "\n"


def with_readme_table(text, entries):
    """README.md's text with the region between the marker lines replaced by the table."""
    begin, end = text.find(TABLE_BEGIN + "\n"), text.find(TABLE_END)
    if begin < 0 or end < begin or text.count(TABLE_BEGIN) != 1 or text.count(TABLE_END) != 1:
        raise NewOpError(f"{README}: expected one line '{TABLE_BEGIN}' followed by one line "
                         f"'{TABLE_END}' around the operator table")
    start = begin + len(TABLE_BEGIN) + 1
    return text[:start] + readme_table(entries) + text[end:]


def plan(name, kind, root=ROOT):
    """(new files {path: text}, rewritten files {path: text}) or NewOpError."""
    if kind not in KINDS:
        raise NewOpError(f"--kind must be one of {', '.join(KINDS)}")
    check_name(name, root)
    subs = substitutions(name)
    created = {}
    base = TEMPLATES / kind
    for tmpl in sorted(base.rglob("*.tmpl")):
        rel = tmpl.relative_to(base).as_posix()[: -len(".tmpl")].replace("__op__", name)
        created[rel] = render(tmpl.read_text(), subs)
    exists = [rel for rel in created if (root / rel).exists()]
    if exists:
        raise NewOpError("these files exist already (an operator of that name, or left "
                         "over from one):\n  " + "\n  ".join(exists))
    data, _ = read_manifest(root)
    data["ops"].append({"name": name, **copy.deepcopy(_ENTRIES[kind])})
    manifest = manifest_module(root)
    entries = manifest.parse(data)
    readme = with_readme_table((root / README).read_text(), entries)
    return created, {MANIFEST: manifest.dump(data), README: readme}


def sync_readme(root=ROOT, check=False):
    """Rewrites README.md's operator table from the manifest; True when it was up to date.
    check: only compare, write nothing."""
    _, entries = read_manifest(root)
    current = (root / README).read_text()
    wanted = with_readme_table(current, entries)
    if not check and wanted != current:
        (root / README).write_text(wanted)
    return wanted == current


def next_steps(name, kind, created):
    return f"""
Next steps for {name} ({kind}); the placeholder math ({'the identity' if kind == 'elementwise'
                                                       else 'a sum'}) already builds and passes:
  1. Edit the math (each place is marked "the operator's math: edit here"):
       ops/{name}/cpu/{name}_cpu.cc
       ops/{name}/nvidia/kernel.cuh
       python/operator_runtime_testing/reference/{name}.py   (the float64 reference)
     and, to match: tests/cases/{name}.py (_tolerance, _torch_{name}), tests/bench/{name}.py
     (the numpy and torch peers), the header comment of include/operator_runtime/ops/{name}.h
     and {name}'s summary and peers in {MANIFEST} (then: python3 scripts/camp.py new-op
     --sync-readme, for README.md's operator table).
  2. Build:      bash scripts/build_cpu.sh build        (GPU: bash scripts/build_nvidia.sh build)
  3. Test:       CAMP_BUILD_DIR=build-cpu python3 -m pytest tests/op_tests -q -k {name} --backend cpu
  4. Run:        CAMP_BUILD_DIR=build-cpu python3 tests/run_ops.py --op {name} --backend cpu --mode all
     (CAMP_BUILD_DIR: the library just built; without it the first of build-nvidia/, build-metax/,
     build-cpu/ that exists is loaded)
See docs/how-to-add-an-operator.md for what each of the {len(created)} new files is for."""


def register(subparsers):
    p = subparsers.add_parser("new-op", add_help=False,
                              help="generate a new operator: new-op NAME --kind elementwise|reduction")
    p.add_argument("args", nargs=argparse.REMAINDER)  # parsed by main(), --help included
    p.set_defaults(func=lambda args: main(args.args), passthrough=True)


def main(argv=None):
    parser = argparse.ArgumentParser(
        prog="camp.py new-op",
        description="Generate a new operator (C API, CPU and GPU kernels, Python, tests, "
                    "benchmark) and add it to the manifest, ops/manifest.json.")
    parser.add_argument("name", nargs="?", help="the operator's name, e.g. silu")
    parser.add_argument("--kind", choices=KINDS,
                        help="elementwise (one input, broadcast like relu) or reduction (over "
                             "one axis, like reduce_sum)")
    parser.add_argument("--dry-run", action="store_true",
                        help="list the files that would be created and rewritten; write "
                             "nothing (with --sync-readme: exit 1 when the table is out of date)")
    parser.add_argument("--sync-readme", action="store_true",
                        help=f"only rewrite {README}'s operator table from {MANIFEST}")
    parser.add_argument("--root", type=Path, default=ROOT, help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    root = args.root.resolve()
    if args.sync_readme:
        if args.name or args.kind:
            parser.error("--sync-readme takes no operator name or --kind")
        try:
            same = sync_readme(root, check=args.dry_run)
        except NewOpError as exc:
            print(f"camp.py new-op: {exc}", file=sys.stderr)
            return 1
        state = "up to date" if same else ("out of date" if args.dry_run else "rewritten")
        print(f"{README}: the operator table is {state}")
        return 0 if same or not args.dry_run else 1
    if not args.name or not args.kind:
        parser.error("the operator's name and --kind are required (or --sync-readme)")
    try:
        created, edited = plan(args.name, args.kind, root)
    except NewOpError as exc:
        print(f"camp.py new-op: {exc}", file=sys.stderr)
        return 1
    verb = "would create" if args.dry_run else "created"
    for rel in created:
        print(f"{verb}  {rel}")
    for rel in edited:
        print(f"{'would rewrite' if args.dry_run else 'rewrote'}  {rel}")
    if args.dry_run:
        return 0
    for rel, text in created.items():
        path = root / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)
    for rel, text in edited.items():
        (root / rel).write_text(text)
    print(next_steps(args.name, args.kind, created))
    return 0


if __name__ == "__main__":
    sys.exit(main())
