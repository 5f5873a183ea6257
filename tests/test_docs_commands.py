"""The commands shown in README.md, docs/camp.md and docs/kernels/*.md, checked so the guides
cannot rot (docs/camp.md's path also runs for real in a fresh copy: test_camp_guide.py).

- Blocks marked `<!-- doc-test -->` before a ```bash block run as they are, against the CPU
  build (CAMP_BUILD_DIR, else build-cpu/): each line must exit 0, run without PYTHONPATH, as a
  reader's shell has none.
- Every other command line of a ```bash block that calls tests/run_ops.py, scripts/camp.py,
  pytest or scripts/*.sh (GPU commands included, marked `<!-- doc-test: parse -->` or not) is
  parsed with the real argument parsers: run_ops's and camp.py's argparse, pytest's
  --collect-only, the build scripts' modes; variant names must be steps of some ladder in the
  sources, and NAME=value prefixes variables that the scripts, CMake files or Python read.
  So a documented flag, mode, variant or variable that disappears fails here.
"""

import os
import re
import shlex
import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]
DOCS = [REPO / "README.md", REPO / "docs" / "camp.md", *sorted((REPO / "docs" / "kernels").glob("*.md"))]
BLOCK = re.compile(r"(<!-- doc-test(?:: parse)? -->\s*)?```bash\n(.*?)```", re.S)
CHECKED = ("python3 tests/run_ops.py", "python3 scripts/camp.py", "python scripts/camp.py",
           "python3 -m pytest", "bash scripts/")


def command_lines(block):
    """The commands of a block: comments and blank lines dropped, `  # ...` tails cut."""
    lines = []
    for line in block.splitlines():
        line = re.split(r"\s+#\s", line, maxsplit=1)[0].strip()
        if line and not line.startswith("#"):
            lines.append(line)
    return lines


def blocks():
    """(doc, marker, lines) for every ```bash block of the guides."""
    found = []
    for doc in DOCS:
        for marker, body in BLOCK.findall(doc.read_text()):
            found.append((doc.relative_to(REPO).as_posix(), marker.strip(), command_lines(body)))
    return found


RUN = [(doc, line) for doc, marker, lines in blocks() if marker == "<!-- doc-test -->"
       for line in lines]
PARSE = [(doc, line) for doc, marker, lines in blocks() if marker != "<!-- doc-test -->"
         for line in lines if line.lstrip("A-Z_=0-9 ").startswith(CHECKED) or
         re.match(r"^([A-Z_][A-Z0-9_]*=\S*\s+)+", line)]


def build_dir():
    d = Path(os.environ.get("CAMP_BUILD_DIR") or REPO / "build-cpu")
    return d if (d / "libcamp_ops.so").exists() else None


def env(doc=None):
    e = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}
    if doc is None:  # the parsers' own runs; the guides' lines as a reader types them
        e["PYTHONPATH"] = str(REPO / "python")
    if build_dir():
        e["CAMP_BUILD_DIR"] = str(build_dir())
    return e


def test_the_guides_have_marked_commands():
    assert len(RUN) >= 5, RUN
    assert len(PARSE) >= 10, PARSE


@pytest.mark.parametrize("doc,line", RUN, ids=[f"{d}:{l[:60]}" for d, l in RUN])
def test_doc_command_runs(doc, line):
    if build_dir() is None:
        pytest.skip("no CPU build (bash scripts/build_cpu.sh build)")
    r = subprocess.run(["bash", "-c", line], cwd=REPO, env=env(doc), capture_output=True,
                       text=True, timeout=120)
    assert r.returncode == 0, f"{doc}: `{line}` failed:\n{r.stdout[-3000:]}\n{r.stderr[-3000:]}"


# ---- parse checks -----------------------------------------------------------------

def ladder_names():
    """Variant names of every ladder in the sources ({"name", &plan_...} entries)."""
    names = {"all", "auto", "student"}
    for src in (list((REPO / "ops").rglob("*.cu")) + list((REPO / "ops").rglob("*/cpu/*.cc"))
                + list((REPO / "runtime").rglob("*.cuh"))):
        names |= set(re.findall(r'\{"(\w+)", &', src.read_text()))
    return names


def read_variables():
    """Every NAME the scripts, CMake files, Python and C++ tests read from the environment."""
    text = ""
    for pattern in ("scripts/**/*.sh", "scripts/**/*.py", "CMakeLists.txt", "cmake/*.cmake",
                    "python/**/*.py", "tests/**/*.py", "tests/cpp/**/*.cu", "tests/cpp/**/*.cc"):
        for f in REPO.glob(pattern):
            text += f.read_text(errors="replace")
    return text


def split_env(line):
    words = shlex.split(line)
    assigned = []
    while words and re.match(r"^[A-Z_][A-Z0-9_]*=", words[0]):
        assigned.append(words.pop(0).split("=", 1)[0])
    return assigned, words


def parse_run_ops(argv):
    sys.path[:0] = [str(REPO / "tests")]
    try:
        import run_ops
    finally:
        del sys.path[0]
    saved = sys.argv
    sys.argv = ["run_ops.py", *argv]
    try:
        args = run_ops.parse_args()
    except SystemExit as e:
        raise AssertionError(f"run_ops rejects {argv}") from e
    finally:
        sys.argv = saved
    if args.variant:
        assert args.variant in ladder_names(), f"--variant {args.variant}: no ladder has it"


def parse_camp(argv):
    sys.path.insert(0, str(REPO / "scripts"))
    try:
        import camp
        args = camp.parse(argv)
    except SystemExit as e:
        raise AssertionError(f"camp.py rejects {argv}") from e
    finally:
        sys.path.remove(str(REPO / "scripts"))
    if args.command == "new-op":  # its own parser: a dry run writes nothing
        extra = [] if "--dry-run" in args.args else ["--dry-run"]
        r = subprocess.run([sys.executable, "scripts/camp.py", *argv, *extra], cwd=REPO,
                           capture_output=True, text=True, timeout=60)
        assert r.returncode == 0, f"camp.py {argv} --dry-run: {r.stderr[-2000:]}"


def parse_pytest(argv):
    # --collect-only: the options exist (conftest's too); exit 5 would be an empty selection.
    r = subprocess.run([sys.executable, "-m", "pytest", *argv, "--collect-only", "-q",
                        "-p", "no:cacheprovider"], cwd=REPO, env=env(), capture_output=True,
                       text=True, timeout=60)
    assert r.returncode == 0, \
        f"pytest {argv}: {r.stdout[-2000:]}\n{r.stderr[-2000:]}"


BUILD_MODES = {"env", "configure", "build", "test", "all", "clean"}


def parse_script(argv):
    script = REPO / argv[0]
    assert script.is_file(), f"{argv[0]} does not exist"
    assert subprocess.run(["bash", "-n", str(script)]).returncode == 0
    if re.match(r"scripts/build_\w+\.sh$", argv[0]) and len(argv) > 1:
        for mode in argv[1].split("|"):
            assert mode in BUILD_MODES, f"{argv[0]}: no mode {mode!r}"


@pytest.mark.parametrize("doc,line", PARSE, ids=[f"{d}:{l[:60]}" for d, l in PARSE])
def test_doc_command_parses(doc, line):
    assigned, words = split_env(line)
    if assigned:
        text = read_variables()
        for name in assigned:
            assert re.search(rf"\b{name}\b", text.replace(line, "")), \
                f"{doc}: {name} is read by nothing in scripts/, cmake/, python/ or tests/"
    if not words:
        return
    cmd = " ".join(words[:2])
    if cmd == "python3 tests/run_ops.py":
        parse_run_ops(words[2:])
    elif cmd in ("python3 scripts/camp.py", "python scripts/camp.py"):
        parse_camp(words[2:])
    elif words[:3] == ["python3", "-m", "pytest"]:
        parse_pytest(words[3:])
    elif words[0] == "bash" and len(words) > 1 and words[1].startswith("scripts/"):
        parse_script(words[1:])


def test_every_variant_the_guides_name_exists():
    names = ladder_names()
    for doc in DOCS:
        # `--variant NAME` and `variant="NAME"` anywhere in the text, code or prose.
        for a, b in re.findall(r"--variant[= ]([a-z_0-9]+)|variant=[\"']([a-z_0-9]+)[\"']",
                               doc.read_text()):
            assert (a or b) in names, f"{doc.name}: variant {a or b!r} is no ladder step"


def test_every_readme_variable_is_read():
    """The README's table of environment variables names only variables something reads."""
    text = (REPO / "README.md").read_text()
    table = text.split("## Environment Variables", 1)[1]
    names = re.findall(r"^\| `([A-Z_][A-Z0-9_]*)`", table, re.M)
    assert len(names) >= 10
    sources = read_variables()
    for name in names:
        if name in ("SKBUILD_CMAKE_DEFINE",):  # read by scikit-build-core, not by this project
            continue
        assert re.search(rf"\b{name}\b", sources), f"README lists {name}; nothing reads it"


def test_every_file_the_docs_name_exists():
    """Relative links in README.md and docs/ (records under docs/perf/ aside) resolve, and the
    repository paths they name in backquotes (`ops/...`, `scripts/...`: those with a file
    extension or a trailing slash, placeholders such as <op> or * aside) exist. student/ is
    made by `camp.py exercise`, third_party/ by the build's fetch steps."""
    docs = [REPO / "README.md", *sorted(p for p in (REPO / "docs").rglob("*.md")
                                        if "perf" not in p.relative_to(REPO / "docs").parts)]
    roots = ("ops", "scripts", "tests", "docs", "runtime", "python", "include", "examples",
             "cmake")
    quoted = re.compile(rf"`((?:{'|'.join(roots)})/[^`\s]*)`")
    missing = []
    for doc in docs:
        text = doc.read_text()
        for target in re.findall(r"\]\(([^)\s]+)\)", text):
            path = target.split("#")[0]
            if path and not target.startswith(("http://", "https://", "mailto:")):
                if not (doc.parent / path).exists():
                    missing.append(f"{doc.relative_to(REPO)}: link {target}")
        for path in quoted.findall(text):
            path = path.rstrip(".,;:")
            if re.search(r"[<>*{}$@]|NAME", path) or not re.search(r"\.\w+$|/$", path):
                continue
            if not (REPO / path).exists():
                missing.append(f"{doc.relative_to(REPO)}: `{path}`")
    assert not missing, "\n".join(missing)
