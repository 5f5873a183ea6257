"""The operator manifest, ops/manifest.json: every operator's name, kind, operands,
parameters, dtypes and benchmark peers, in one file.

Python reads it here, at run time: the ctypes signatures (_lib.OP_SIGNATURES), the ops
package's modules (ops/__init__.py), the float64 references (operator_runtime_testing.reference)
and the test cases (tests/cases) all come from names() and op(). CMake reads the same file
at configure time (cmake/manifest.cmake) for the umbrella header and the C++ test table.

The file is looked for next to this module (an installed package: cmake/install.cmake puts it
there) and then at <repo>/ops/manifest.json (a source checkout).

This module uses the standard library only, so scripts/camp_tools/new_op.py can load it by
path (without importing the package) to add an entry in the same layout (dump()).
"""

import json
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path
from typing import Dict, Optional, Tuple

# elementwise: out = f(inputs) per element, inputs broadcast to out, exact in-place allowed;
# reduction: out is the input with one axis removed (or kept as 1);
# normalization: out has the input's shape, computed along one axis (softmax);
# matmul: out (M, N) = a (M, K) @ b (K, N), all three 2-D, no broadcasting, never in place.
KINDS = ("elementwise", "reduction", "normalization", "matmul")
C_TYPES = ("float", "int64_t")  # of a parameter: what ctypes and the C++ test table pass
DTYPES = ("f32", "f16", "bf16")
FIELDS = ("name", "kind", "output", "inputs", "params", "dtypes", "summary", "peers")
PARAM_FIELDS = ("name", "c_type", "default")  # and optional "python": its Python name


class ManifestError(ValueError):
    """ops/manifest.json is missing or does not describe its operators completely."""


@dataclass(frozen=True)
class Param:
    name: str  # as the C header spells it
    c_type: str
    default: object  # the Python API's default
    python: str  # the Python API's name for it (the C name unless the entry says otherwise)


@dataclass(frozen=True)
class OpEntry:
    name: str
    kind: str
    output: str  # the output's name in the C header (dst, out)
    inputs: Tuple[str, ...]  # the inputs' names in the C header, in order
    params: Tuple[Param, ...]  # the scalars after the inputs in oprt_create_<op>_descriptor
    dtypes: Tuple[str, ...]
    summary: str  # one line: the math and its special values (README's operator table)
    peers: Dict[str, str]  # what tests/bench/<op>.py times it against: {"numpy": ..., "torch": ...}


def path() -> Path:
    here = Path(__file__).resolve().parent
    for candidate in (here / "manifest.json", here.parents[1] / "ops" / "manifest.json"):
        if candidate.is_file():
            return candidate
    raise ManifestError(f"no operator manifest: neither {here / 'manifest.json'} nor "
                        f"{here.parents[1] / 'ops' / 'manifest.json'} exists")


def parse(data) -> Tuple[OpEntry, ...]:
    """The entries of a parsed manifest, each checked for every field."""
    ops = data.get("ops") if isinstance(data, dict) else None
    if not isinstance(ops, list) or not ops:
        raise ManifestError("the manifest needs a non-empty list \"ops\"")
    entries = []
    for raw in ops:
        where = f"operator {raw.get('name', '?')!r}" if isinstance(raw, dict) else "an entry"
        if not isinstance(raw, dict) or set(raw) != set(FIELDS):
            raise ManifestError(f"{where}: the fields must be exactly {', '.join(FIELDS)}")
        if raw["kind"] not in KINDS:
            raise ManifestError(f"{where}: kind {raw['kind']!r} is not one of {', '.join(KINDS)}")
        if not raw["inputs"] or not all(isinstance(n, str) for n in raw["inputs"]):
            raise ManifestError(f"{where}: inputs must be a non-empty list of names")
        if not set(raw["dtypes"]) <= set(DTYPES) or not raw["dtypes"]:
            raise ManifestError(f"{where}: dtypes must be some of {', '.join(DTYPES)}")
        params = []
        for p in raw["params"]:
            if not isinstance(p, dict) or not set(PARAM_FIELDS) <= set(p) \
                    or not set(p) <= set(PARAM_FIELDS) | {"python"}:
                raise ManifestError(f"{where}: a parameter has the fields "
                                    f"{', '.join(PARAM_FIELDS)} (and optionally python)")
            if p["c_type"] not in C_TYPES:
                raise ManifestError(f"{where}: parameter {p['name']!r} has c_type "
                                    f"{p['c_type']!r}, not one of {', '.join(C_TYPES)}")
            params.append(Param(p["name"], p["c_type"], p["default"], p.get("python", p["name"])))
        entries.append(OpEntry(raw["name"], raw["kind"], raw["output"], tuple(raw["inputs"]),
                               tuple(params), tuple(raw["dtypes"]), raw["summary"],
                               dict(raw["peers"])))
    names = [e.name for e in entries]
    if len(set(names)) != len(names):
        raise ManifestError(f"an operator is listed twice: {names}")
    return tuple(entries)


@lru_cache(maxsize=None)
def load(manifest: Optional[Path] = None) -> Tuple[OpEntry, ...]:
    """Every operator, in the manifest's order."""
    manifest = Path(manifest) if manifest is not None else path()
    try:
        data = json.loads(manifest.read_text())
    except json.JSONDecodeError as exc:
        raise ManifestError(f"{manifest}: not valid JSON: {exc}") from None
    try:
        return parse(data)
    except ManifestError as exc:
        raise ManifestError(f"{manifest}: {exc}") from None


def names() -> Tuple[str, ...]:
    return tuple(e.name for e in load())


def op(name: str) -> OpEntry:
    for entry in load():
        if entry.name == name:
            return entry
    raise KeyError(f"{name!r} is not in the operator manifest ({', '.join(names())})")


def dump(data) -> str:
    """The manifest's text, in its one layout: a field per line, lists and objects inline."""
    lines = ["{"]
    rest = [k for k in data if k != "ops"]
    for key in rest:
        lines.append(f"  {json.dumps(key)}: {json.dumps(data[key], ensure_ascii=False)},")
    lines.append('  "ops": [')
    for i, entry in enumerate(data["ops"]):
        lines.append("    {")
        fields = [f"      {json.dumps(k)}: {json.dumps(v, ensure_ascii=False)}"
                  for k, v in entry.items()]
        lines.append(",\n".join(fields))
        lines.append("    }" + ("," if i + 1 < len(data["ops"]) else ""))
    lines.append("  ]")
    lines.append("}")
    return "\n".join(lines) + "\n"
