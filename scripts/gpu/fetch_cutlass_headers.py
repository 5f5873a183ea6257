#!/usr/bin/env python3
"""Fetches the CUTLASS/CuTe headers from PyPI into a folder (cmake/cutlass.cmake runs it on
the first configure that finds none; no git needed).

The nvidia-cutlass wheel carries them under cutlass_library/source/: include/{cute,cutlass}
and tools/util/include. Only those are extracted, as DEST/include and DEST/tools/util/include.

    python3 scripts/gpu/fetch_cutlass_headers.py third_party/cutlass [--version 4.2.0.0]
"""

import argparse
import json
import shutil
import subprocess
import sys
import tempfile
import urllib.request
import zipfile
from pathlib import Path

DEFAULT_VERSION = "4.2.0.0"
PREFIX = "cutlass_library/source/"
KEEP = ("include/cute/", "include/cutlass/", "tools/util/include/")


def download(version, where):
    """The wheel's path: pip download when pip works, else the PyPI JSON API with urllib."""
    spec = f"nvidia-cutlass=={version}"
    result = subprocess.run([sys.executable, "-m", "pip", "download", "--quiet", "--no-deps",
                             "--only-binary=:all:", "-d", str(where), spec],
                            capture_output=True, text=True)
    wheels = list(where.glob("nvidia_cutlass-*.whl"))
    if result.returncode == 0 and wheels:
        return wheels[0]
    print(f"fetch_cutlass_headers: pip download failed ({result.stderr.strip()[-300:]}); "
          f"trying the PyPI JSON API", file=sys.stderr)
    with urllib.request.urlopen(f"https://pypi.org/pypi/nvidia-cutlass/{version}/json",
                                timeout=60) as r:
        files = json.load(r)["urls"]
    url = next(f["url"] for f in files if f["filename"].endswith(".whl"))
    path = where / url.rsplit("/", 1)[1]
    with urllib.request.urlopen(url, timeout=300) as r, open(path, "wb") as f:
        shutil.copyfileobj(r, f)
    return path


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("dest", type=Path)
    parser.add_argument("--version", default=DEFAULT_VERSION)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        wheel = download(args.version, Path(tmp))
        staging = Path(tmp) / "cutlass"
        count = 0
        with zipfile.ZipFile(wheel) as z:
            for info in z.infolist():
                rel = info.filename[len(PREFIX):] if info.filename.startswith(PREFIX) else None
                if rel and rel.startswith(KEEP) and not info.is_dir():
                    target = staging / rel
                    target.parent.mkdir(parents=True, exist_ok=True)
                    target.write_bytes(z.read(info))
                    count += 1
        if not (staging / "include/cute/tensor.hpp").is_file():
            sys.exit(f"fetch_cutlass_headers: {wheel.name} has no {PREFIX}include/cute/tensor.hpp")
        (staging / "VERSION").write_text(f"nvidia-cutlass {args.version} (headers only)\n")
        if args.dest.exists():
            shutil.rmtree(args.dest)
        args.dest.parent.mkdir(parents=True, exist_ok=True)
        shutil.move(str(staging), str(args.dest))  # whole, or not at all
    print(f"fetch_cutlass_headers: {count} headers of nvidia-cutlass {args.version} in {args.dest}")


if __name__ == "__main__":
    main()
