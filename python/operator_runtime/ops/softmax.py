"""softmax: out = exp(src - max) / sum(exp(src - max)) along dim; a slice of all -inf gives NaN."""

from ._common import describe_input, normalize_dim, prepare, run_once

_NAMES = ("out", "src")


def softmax(src, dim=-1, *, backend="auto", variant=None):
    """A new array softmax(src, dim), allocated by src's library."""
    s = describe_input("softmax", src)
    params = {"dim": normalize_dim("softmax", dim, s.ndim)}
    return run_once("softmax", "softmax", _NAMES, (s.kind.empty(s, s.shape), src), params,
                    backend, variant)


def softmax_(out, src, dim=-1, *, backend="auto", variant=None):
    """Writes softmax(src, dim) into out (out must not overlap src); returns out."""
    params = {"dim": normalize_dim("softmax_", dim, describe_input("softmax_", src).ndim)}
    return run_once("softmax_", "softmax", _NAMES, (out, src), params, backend, variant)


def prepare_softmax(out, src, dim=-1, *, backend="auto", variant=None):
    """A PreparedOp computing softmax_(out, src, dim)."""
    params = {"dim": normalize_dim("prepare_softmax", dim,
                                   describe_input("prepare_softmax", src).ndim)}
    return prepare("prepare_softmax", "softmax", _NAMES, (out, src), params, backend, variant)
