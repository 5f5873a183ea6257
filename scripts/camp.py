#!/usr/bin/env python3
"""The training camp's tools. Subcommands:

  new-op NAME --kind elementwise|reduction [--dry-run]   a new operator (scripts/camp_newop.py)
"""

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))


def main(argv=None):
    argv = sys.argv[1:] if argv is None else argv
    if argv and argv[0] == "new-op":
        import camp_newop
        return camp_newop.main(argv[1:])
    print(__doc__.strip(), file=sys.stderr)
    return 0 if argv[:1] in (["-h"], ["--help"]) else 2


if __name__ == "__main__":
    sys.exit(main())
