#!/usr/bin/env python3
"""The training camp's command line.

  python scripts/camp.py exercise softmax [--backend cpu|nvidia]   a "student" variant to write
  python scripts/camp.py check softmax [--backend ...]             build it, run the op's cases on it
  python scripts/camp.py judge softmax [--backend ...]             judge it like a contest, time it, score it
  python scripts/camp.py reset softmax [--backend ...]             remove it (and rebuild)
  python scripts/camp.py new-op NAME --kind elementwise|reduction   generate a new operator

Each subcommand lives in scripts/camp_tools/<module>.py (see its __init__.py).
"""

import argparse
import importlib
import pkgutil
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

import camp_tools  # noqa: E402


def parse(argv=None):
    """The parsed arguments of `argv` (new-op's own arguments still unparsed in args.args)."""
    parser = argparse.ArgumentParser(prog="camp.py", description=__doc__.splitlines()[0])
    sub = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")
    for info in sorted(pkgutil.iter_modules(camp_tools.__path__), key=lambda m: m.name):
        module = importlib.import_module(f"camp_tools.{info.name}")
        if hasattr(module, "register"):
            module.register(sub)
    args, extra = parser.parse_known_args(argv)
    if extra:  # only a subcommand that parses its own arguments (new-op) takes them
        if not getattr(args, "passthrough", False):
            parser.error(f"unrecognized arguments: {' '.join(extra)}")
        args.args = list(getattr(args, "args", [])) + extra
    return args


def main(argv=None):
    args = parse(argv)
    return args.func(args)


if __name__ == "__main__":
    sys.exit(main())
