"""Packaging: one version everywhere, and where the library is loaded from.

The version is project(VERSION) of CMakeLists.txt. It must be, all at once:
operator_runtime.__version__, oprt_version() of the loaded library, the
version of the CMake package written next to the library in a build folder
(operator_runtimeConfigVersion.cmake), and the distribution's version when the
package is pip-installed. tests/cpp/version_test.cc checks the C side, and
examples/cpp checks an installed CMake package against oprt_version().

CAMP_EXPECT_INSTALLED=1 (scripts/ci/package.sh) also requires that the package
and its library come from an installation, not from the source tree.
"""

import importlib.metadata
import os
import re
from pathlib import Path

import pytest

import operator_runtime as ort
from operator_runtime import _lib

REPO = Path(__file__).resolve().parents[1]
VERSION_RE = r"[0-9]+\.[0-9]+\.[0-9]+"


def _loaded_from_package():
    """Whether the loaded library is the one installed inside the package."""
    return Path(ort.library_path()) in _lib.package_library_paths()


def test_version_is_the_library_version():
    assert re.fullmatch(VERSION_RE, ort.__version__), ort.__version__
    assert ort.library_version() == ort.__version__


def test_version_is_cmakelists_project_version():
    cmakelists = REPO / "CMakeLists.txt"
    if not cmakelists.is_file():
        pytest.skip(f"no source tree around the tests ({cmakelists} is missing)")
    match = re.search(r"project\(\s*operator_runtime\s+VERSION\s+(" + VERSION_RE + r")",
                      cmakelists.read_text())
    assert match, f"no project(operator_runtime VERSION x.y.z) in {cmakelists}"
    # The library's number was compiled in from CMakeLists.txt at build time: a
    # library built from another version fails here, whichever way __version__ was read.
    assert ort.library_version() == match.group(1), "the library was built from another version"
    assert ort.__version__ == match.group(1)


def test_version_is_the_cmake_package_version():
    config = Path(ort.library_path()).parent / "operator_runtimeConfigVersion.cmake"
    if not config.is_file():
        pytest.skip(f"the library was not loaded from a CMake build folder ({config} is missing)")
    match = re.search(r'set\(PACKAGE_VERSION "([^"]+)"\)', config.read_text())
    assert match, f"no PACKAGE_VERSION in {config}"
    assert match.group(1) == ort.__version__


def test_version_is_the_distribution_version():
    if not _loaded_from_package():
        pytest.skip(f"the library is not the packaged one ({ort.library_path()})")
    assert importlib.metadata.version("operator-runtime") == ort.__version__


def test_search_order(monkeypatch):
    """CAMP_BUILD_DIR alone when set; else the packaged library, then (in a source
    checkout) build-nvidia, build-metax, build-cpu (build-metax first for metax)."""
    monkeypatch.setenv("CAMP_BUILD_DIR", "/somewhere/build")
    assert _lib._search_paths(None) == [Path("/somewhere/build") / _lib.LIBRARY_NAME]

    monkeypatch.delenv("CAMP_BUILD_DIR")
    packaged = _lib.package_library_paths()
    assert packaged and all(p.name == _lib.LIBRARY_NAME for p in packaged)
    build_dirs = [_lib.REPO_ROOT / d / _lib.LIBRARY_NAME
                  for d in ("build-nvidia", "build-metax", "build-cpu")]
    expected = packaged + (build_dirs if _lib.in_source_tree() else [])
    assert _lib._search_paths(None) == expected
    if _lib.in_source_tree():
        metax_first = [build_dirs[1], build_dirs[0], build_dirs[2]]
        assert _lib._search_paths("metax") == packaged + metax_first


def test_installed_package_uses_its_own_library():
    if os.environ.get("CAMP_EXPECT_INSTALLED") != "1":
        pytest.skip("CAMP_EXPECT_INSTALLED=1 is not set (scripts/ci/package.sh sets it)")
    assert "CAMP_BUILD_DIR" not in os.environ
    assert not _lib.in_source_tree(), f"imported from the source tree: {ort.__file__}"
    assert _loaded_from_package(), f"loaded {ort.library_path()}, not the packaged library"
