"""new-op: generate a new operator from the templates (all logic in scripts/camp_newop.py)."""

import argparse


def register(subparsers):
    p = subparsers.add_parser("new-op", add_help=False,
                              help="generate a new operator: new-op NAME --kind elementwise|reduction")
    p.add_argument("args", nargs=argparse.REMAINDER)  # parsed by camp_newop, --help included
    p.set_defaults(func=_run, passthrough=True)


def _run(args):
    import camp_newop

    return camp_newop.main(args.args)
