"""silu: out = silu(src), elementwise (src broadcasts to out by numpy rules)."""

from ._common import describe_input, prepare, run_once

_NAMES = ("out", "src")


def silu(src, *, backend="auto", variant=None):
    """A new array silu(src), allocated by src's library."""
    s = describe_input("silu", src)
    return run_once("silu", "silu", _NAMES, (s.kind.empty(s, s.shape), src), {}, backend, variant)


def silu_(out, src, *, backend="auto", variant=None):
    """Writes silu(src) into out (out may be src itself); returns out."""
    return run_once("silu_", "silu", _NAMES, (out, src), {}, backend, variant)


def prepare_silu(out, src, *, backend="auto", variant=None):
    """A PreparedOp computing silu_(out, src)."""
    return prepare("prepare_silu", "silu", _NAMES, (out, src), {}, backend, variant)
