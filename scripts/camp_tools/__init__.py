"""The subcommands of scripts/camp.py, one module each.

A module here that defines register(subparsers) is a subcommand: camp.py imports
every module of this package and calls register, which adds its parser(s) and
sets `func` (called with the parsed args; its return value is the exit status).
exercise.py: exercise, check, reset. A new subcommand (e.g. new_op.py) needs no
change to camp.py.
"""
