"""The operator manifest (ops/manifest.json) against what it describes: the C headers, the
folders under ops/, the Python functions, the benchmark peers, README.md's operator table.

Everything that lists the operators is derived from the manifest (the Python package, the test
references and cases at run time, the umbrella header and the C++ test table at configure
time); these checks catch an entry that says something else than the code it names.
"""

import importlib.util
import inspect
import json
import re
from pathlib import Path

import pytest

import operator_runtime as ort
from operator_runtime import _lib, _manifest
from operator_runtime_testing import reference

REPO = Path(__file__).resolve().parents[1]
TESTS = Path(__file__).resolve().parent
SOURCE = REPO / "ops" / "manifest.json"
needs_source = pytest.mark.skipif(not SOURCE.is_file(), reason="needs the source tree "
                                                                "(ops/manifest.json)")
ENTRIES = _manifest.load()
NAMES = [e.name for e in ENTRIES]


def _new_op():
    spec = importlib.util.spec_from_file_location("_camp_new_op",
                                                  REPO / "scripts/camp_tools/new_op.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def _modules(folder, helpers=()):
    return sorted(p.stem for p in folder.glob("*.py") if not p.name.startswith("_")
                  and p.stem not in helpers)


def test_every_consumer_lists_the_manifest():
    """The lists of operators (cases.OPS, reference.REFERENCES, ort.ops.__all__, the bindings)
    are built from the manifest, so comparing them with it proves nothing. What must match it
    are the files each operator brings and the symbols the library exports: no operator's file
    without an entry, no entry without its files and C functions."""
    names = sorted(NAMES)
    assert _modules(TESTS / "cases", helpers={"shapes"}) == names
    assert _modules(Path(reference.__file__).parent) == names
    assert _modules(Path(ort.ops.__file__).parent) == names
    dll = _lib.get().dll
    for name in NAMES:
        for symbol in (f"oprt_create_{name}_descriptor", f"oprt_get_{name}_workspace_size",
                       f"oprt_execute_{name}", f"oprt_destroy_{name}_descriptor",
                       f"oprt_check_{name}_execute", f"oprt_get_{name}_kernel_name",
                       f"oprt_list_{name}_variants", f"oprt_set_{name}_variant"):
            assert hasattr(dll, symbol), f"{_lib.get().path} does not export {symbol}"


@pytest.mark.parametrize("entry", ENTRIES, ids=NAMES)
def test_python_api_matches(entry):
    """The allocating form takes the inputs, then the parameters under their Python names
    with the manifest's defaults (the C side: test_c_header_matches)."""
    signature = inspect.signature(getattr(ort, entry.name)).parameters
    positional = [p for p in signature.values()
                  if p.kind == p.POSITIONAL_OR_KEYWORD and p.default is p.empty]
    assert len(positional) == len(entry.inputs)
    for param in entry.params:
        assert param.python in signature, f"{entry.name}() has no parameter {param.python}"
        assert signature[param.python].default == param.default


@pytest.mark.parametrize("entry", ENTRIES, ids=NAMES)
def test_bench_peers_match(entry):
    spec = importlib.util.spec_from_file_location(f"_bench_{entry.name}",
                                                  TESTS / "bench" / f"{entry.name}.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    assert set(module.PEERS) == set(entry.peers)


@needs_source
def test_manifest_is_in_its_layout():
    """One layout (what the generator writes), so adding an entry changes only its lines."""
    text = SOURCE.read_text()
    assert _manifest.dump(json.loads(text)) == text
    assert _manifest.path() == SOURCE.resolve()


@needs_source
@pytest.mark.parametrize("entry", ENTRIES, ids=NAMES)
def test_c_header_matches(entry):
    """oprt_create_<op>_descriptor takes the output, the inputs and the parameters, in the
    manifest's order, under its names and C types."""
    header = (REPO / "include/operator_runtime/ops" / f"{entry.name}.h").read_text()
    decl = re.search(rf"oprt_create_{entry.name}_descriptor\((.*?)\);", header, re.S)
    assert decl, f"{entry.name}.h declares no oprt_create_{entry.name}_descriptor"
    args = [" ".join(a.split()) for a in decl.group(1).split(",")]
    wanted = ([f"oprt_{entry.name}_descriptor_t *desc"]
              + [f"const oprt_tensor_view_t *{n}" for n in (entry.output, *entry.inputs)]
              + [f"{p.c_type} {p.name}" for p in entry.params])
    assert args == wanted


@needs_source
def test_every_operator_has_its_folder():
    """ops/<op>/{<op>.cc, <op>_backends.h, cpu/, nvidia/kernel.cuh}, and no folder without
    an entry."""
    folders = sorted(p.name for p in (REPO / "ops").iterdir()
                     if p.is_dir() and any(f.suffix in (".cc", ".h") for f in p.rglob("*")))
    assert folders == sorted(NAMES)
    for name in NAMES:
        for rel in (f"{name}.cc", f"{name}_backends.h", f"cpu/{name}_cpu.cc",
                    "nvidia/kernel.cuh", f"nvidia/{name}_cuda.cu", f"metax/{name}_metax.maca"):
            assert (REPO / "ops" / name / rel).is_file(), f"ops/{name}/{rel} is missing"


@needs_source
def test_readme_table_is_the_manifest():
    new_op = _new_op()
    assert new_op.sync_readme(REPO, check=True), (
        "README.md's operator table differs from ops/manifest.json: run "
        "python3 scripts/camp.py new-op --sync-readme")
    table = new_op.readme_table(ENTRIES)
    assert all(f"| {name} | " in table for name in NAMES)


def test_a_wrong_entry_is_refused():
    good = json.loads(_manifest.dump({"ops": [
        {"name": "x", "kind": "elementwise", "output": "out", "inputs": ["in"], "params": [],
         "dtypes": ["f32"], "summary": "", "peers": {}}]}))
    assert _manifest.parse(good)[0].name == "x"
    for field, value in (("kind", "scan"), ("dtypes", ["f64"]), ("inputs", []),
                         ("params", [{"name": "k", "c_type": "double", "default": 0}])):
        bad = json.loads(json.dumps(good))
        bad["ops"][0][field] = value
        with pytest.raises(_manifest.ManifestError):
            _manifest.parse(bad)
    twice = {"ops": good["ops"] * 2}
    with pytest.raises(_manifest.ManifestError, match="twice"):
        _manifest.parse(twice)
