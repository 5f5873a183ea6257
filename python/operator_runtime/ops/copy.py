"""copy: dst = src, with src broadcast to dst's shape by numpy rules."""

from ._common import describe_input, prepare, run_once

_NAMES = ("dst", "src")


def copy(src, *, backend="auto", variant=None):
    """A new contiguous array equal to src, allocated by src's library."""
    s = describe_input("copy", src)
    return run_once("copy", "copy", _NAMES, (s.kind.empty(s, s.shape), src), {}, backend, variant)


def copy_(dst, src, *, backend="auto", variant=None):
    """Writes src into dst; returns dst."""
    return run_once("copy_", "copy", _NAMES, (dst, src), {}, backend, variant)


def prepare_copy(dst, src, *, backend="auto", variant=None):
    """A PreparedOp computing copy_(dst, src)."""
    return prepare("prepare_copy", "copy", _NAMES, (dst, src), {}, backend, variant)
