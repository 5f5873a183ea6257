"""The GPU peers besides torch eager: torch.compile (inductor), a one-row-per-program Triton
kernel, QuACK. Each is a factory factory(out, *inputs, **params) -> a zero-argument function that
computes into `out` and only enqueues work on the current stream (so a CUDA graph can capture
it), or raises NotAvailable(why) for a library that is missing or a case it does not take.
tests/bench/<op>.py lists the ones that make sense for its operator in GPU_PEERS.
"""

import functools


class NotAvailable(Exception):
    """A peer that cannot run a case; the message says why (the benchmark prints "n/a")."""


@functools.lru_cache(maxsize=None)
def _import_problem(module):
    """None when `module` imports, else why not."""
    import importlib

    try:
        importlib.import_module(module)
    except Exception as exc:  # noqa: BLE001 (any import failure makes the peer n/a)
        return f"{module} not importable ({type(exc).__name__}: {str(exc)[:80]})"
    return None


def _need(module):
    why = _import_problem(module)
    if why:
        raise NotAvailable(why)


_compiled = {}  # one torch.compile wrapper per peer for the case being run


def start_case():
    """Called before each case's peers are made: torch.compile starts afresh, so every shape
    is compiled static (no recompile limit reached, no dynamic-shape kernels)."""
    _compiled.clear()
    if _import_problem("torch") is None:
        import torch

        torch.compiler.reset()


def _last_dim_rows(src, dim, what):
    """(rows, row length) of a contiguous src reduced or normalized over its last dim."""
    if dim is None:
        raise NotAvailable(f"{what}: one program per row; this case reduces every element")
    if src.dim() == 0 or dim % src.dim() != src.dim() - 1:
        raise NotAvailable(f"{what}: the last dim only (this case: dim {dim})")
    if not src.is_contiguous():
        raise NotAvailable(f"{what}: contiguous rows only")
    n = src.shape[-1]
    return src.numel() // max(n, 1), n


# ---------------------------------------------------------------------------
# torch.compile


def compiled(build):
    """A peer: torch.compile (inductor, static shapes) of out.copy_(fn(*inputs, **params)),
    which inductor turns into kernels writing `out` directly; fn = build(torch)."""

    def factory(out, *inputs, **params):
        _need("torch")
        _need("triton")  # inductor's GPU kernels are Triton kernels

        import torch

        # One wrapper for all the buffer sets of a case: a new torch.compile wrapper would
        # compile again (its backend is another object), up to the recompile limit.
        key = (id(factory), tuple(sorted(params.items())))
        if key not in _compiled:
            fn = build(torch)

            def body(out, *inputs):
                out.copy_(fn(*inputs, **params))

            _compiled[key] = torch.compile(body, dynamic=False)
        run = _compiled[key]
        return lambda: run(out, *inputs)

    return factory


# ---------------------------------------------------------------------------
# Triton: one program per row, the whole row in registers (BLOCK = next power of two of it)

MAX_TRITON_BLOCK = 1 << 16  # longer rows: one program cannot hold them


@functools.lru_cache(maxsize=None)
def _triton_kernels():
    import triton
    import triton.language as tl

    @triton.jit
    def softmax_rows(x_ptr, out_ptr, n, x_row_stride, out_row_stride, BLOCK: tl.constexpr):
        row = tl.program_id(0).to(tl.int64)
        cols = tl.arange(0, BLOCK)
        mask = cols < n
        x = tl.load(x_ptr + row * x_row_stride + cols, mask=mask, other=-float("inf"))
        x = x.to(tl.float32)
        e = tl.exp(x - tl.max(x, axis=0))
        y = e / tl.sum(e, axis=0)
        tl.store(out_ptr + row * out_row_stride + cols, y.to(out_ptr.dtype.element_ty), mask=mask)

    @triton.jit
    def sum_rows(x_ptr, out_ptr, n, x_row_stride, BLOCK: tl.constexpr):
        row = tl.program_id(0).to(tl.int64)
        cols = tl.arange(0, BLOCK)
        x = tl.load(x_ptr + row * x_row_stride + cols, mask=cols < n, other=0.0)
        total = tl.sum(x.to(tl.float32), axis=0)
        tl.store(out_ptr + row, total.to(out_ptr.dtype.element_ty))

    return triton, softmax_rows, sum_rows


def _triton_launch_shape(src, dim, what):
    _need("triton")
    rows, n = _last_dim_rows(src, dim, what)
    triton = _triton_kernels()[0]
    block = triton.next_power_of_2(max(n, 1))
    if block > MAX_TRITON_BLOCK:
        raise NotAvailable(f"{what}: rows of {n} exceed one program's {MAX_TRITON_BLOCK} elements")
    warps = 4 if block <= 2048 else 8 if block <= 8192 else 16 if block <= 32768 else 32
    return rows, n, block, warps


def triton_softmax(out, src, dim=-1):
    rows, n, block, warps = _triton_launch_shape(src, dim, "triton softmax")
    kernel = _triton_kernels()[1][(rows,)]
    x, y = src.view(rows, n), out.view(rows, n)
    return lambda: kernel(x, y, n, x.stride(0), y.stride(0), BLOCK=block, num_warps=warps)


def triton_sum_rows(out, src, dim=-1):
    rows, n, block, warps = _triton_launch_shape(src, dim, "triton row sum")
    kernel = _triton_kernels()[2][(rows,)]
    x, y = src.view(rows, n), out.view(rows)
    return lambda: kernel(x, y, n, x.stride(0), BLOCK=block, num_warps=warps)


# ---------------------------------------------------------------------------
# QuACK (quack-kernels: CuTe-DSL kernels; scripts/gpu/fetch_quack_wheels.sh brings it offline)


def quack_softmax(out, src, dim=-1):
    _need("quack.softmax")
    from quack.softmax import _softmax_fwd

    rows, n = _last_dim_rows(src, dim, "quack softmax")
    x, y = src.view(rows, n), out.view(rows, n)
    return lambda: _softmax_fwd(x, y)


def quack_none(what):
    """A peer QuACK has no kernel for: always n/a, with that reason."""

    def factory(out, *inputs, **params):
        _need("quack")
        raise NotAvailable(f"QuACK has no {what} kernel")

    return factory
