"""Known-wrong exercise solutions: the judge's own tests (tests/test_camp_judge.py).

Each is a student file made from the scaffold with one classic mistake. `camp.py judge`
must reject every one with a verdict that matches `reason` (a regex).
The mistakes are the ones contest judges see most: a reduction without a barrier, a kernel
that ignores the tail, an accumulator too narrow for long rows, a result remembered by
buffer address, a write past the end of the output; for matmul, a K loop over whole tiles
only (the K tail ignored) and a tiled kernel missing its second barrier.
"""

from dataclasses import dataclass

from . import scaffolds


@dataclass(frozen=True)
class Wrong:
    name: str
    op: str
    backend: str
    reason: str  # a regex the judge's verdict must match
    source: str  # the whole student file

    @property
    def filename(self):
        return f"{self.op}_student{'.cc' if self.backend == 'cpu' else '.cu'}"


def _with_body(op, backend, body):
    return scaffolds.replace_body(scaffolds.render(op, backend), body)


# reduce_sum rows, one output per row; `conv` is "" on the CPU and "dev::" on the GPU.
def _row_sum(backend, loop_end="p.axis_len", acc="float", add="s += {conv}to_f32(x[k]);",
             store="out[oo] = {conv}from_f32<T>(float(s));", pre="", post=""):
    conv = "" if backend == "cpu" else "dev::"
    rows = ("    for (int64_t r = 0; r < p.outer; ++r) {\n" if backend == "cpu" else
            "    const int64_t r = int64_t(blockIdx.x) * blockDim.x + threadIdx.x;\n"
            "    if (r >= p.outer) return;\n    {\n")
    return (pre + rows +
            "        int64_t io = 0, oo = 0;\n"
            "        axis_outer_offsets(p, r, &io, &oo);\n"
            "        const T *x = in + io;\n"
            f"        {acc} s = 0;\n"
            f"        for (int64_t k = 0; k < {loop_end}; ++k) {add.format(conv=conv)}\n"
            f"        {store.format(conv=conv)}\n    }}\n" + post)


def _tail(backend):
    # Rows in steps of 8; the last axis_len % 8 elements are never added.
    return Wrong("ignores_tail", "reduce_sum", backend, r"wrong result on shape \(3, 37\) f32",
                 _with_body("reduce_sum", backend, _row_sum(backend, loop_end="p.axis_len / 8 * 8")))


def _low_precision(backend):
    # The running sum rounded to the storage type after every add: fine for f32 and short
    # rows, far off for 16-bit rows of thousands of elements.
    add = "s = {conv}to_f32({conv}from_f32<T>(s + {conv}to_f32(x[k])));"
    return Wrong("low_precision", "reduce_sum", backend, r"wrong result on shape \(\d+, \d+\) f16",
                 _with_body("reduce_sum", backend, _row_sum(backend, add=add)))


def _cached(backend):
    # Remembers the last input address and returns at once when it comes again.
    seen = ("    static const void *seen = nullptr;\n"
            "    if (seen == {ptr}) return;\n"
            "    seen = {ptr};\n")
    if backend == "cpu":
        return Wrong("cached_by_pointer", "reduce_sum", backend, r"previous call's result",
                     _with_body("reduce_sum", backend, _row_sum(backend, pre=seen.format(ptr="in"))))
    text = _with_body("reduce_sum", backend, _row_sum(backend))
    head = "void launch(const AxisPlan &p, const ExecArgs &a) {\n"
    assert head in text
    text = text.replace(head, head + seen.format(ptr="a.in0"))
    return Wrong("cached_by_pointer", "reduce_sum", backend, r"previous call's result", text)


def _out_of_bounds(backend):
    # Writes one element past the end of the output (the last row writes two).
    store = ("out[oo] = {conv}from_f32<T>(float(s));\n"
             "        if (r == p.outer - 1) out[oo + 1] = {conv}from_f32<T>(0.0f);")
    return Wrong("writes_past_end", "reduce_sum", backend,
                 r"writes outside the output|outside the buffers it was given",
                 _with_body("reduce_sum", backend, _row_sum(backend, store=store)))


# A block per row, a tree in shared memory, and no __syncthreads() between its steps.
_RACY_BODY = """\
    __shared__ float partial[kThreads];
    const int64_t r = blockIdx.x;
    int64_t io = 0, oo = 0;
    axis_outer_offsets(p, r, &io, &oo);
    float s = 0;
    for (int64_t k = threadIdx.x; k < p.axis_len; k += blockDim.x) s += dev::to_f32(in[io + k]);
    partial[threadIdx.x] = s;
    for (int step = kThreads / 2; step > 0; step /= 2) {
        // missing: __syncthreads(), so a thread may read a partial sum not yet written
        if (int(threadIdx.x) < step) partial[threadIdx.x] += partial[threadIdx.x + step];
    }
    if (threadIdx.x == 0) out[oo] = dev::from_f32<T>(partial[0]);
"""


def _racy():
    text = _with_body("reduce_sum", "nvidia", _RACY_BODY)
    launch = "int64_t blocks = (p.outer + kThreads - 1) / kThreads;"
    assert launch in text
    text = text.replace(launch, "int64_t blocks = p.outer;  // a block per row")
    return Wrong("racy_reduction", "reduce_sum", "nvidia", r"racecheck: a data race",
                 text)


# ---- matmul ---------------------------------------------------------------------------------

def _matmul_k_tail(backend):
    # K walked in whole steps of 16 (CPU) or whole tiles (GPU): the last K % 16 (K % kTile)
    # products of every sum are missing. The probe shapes have K = 45 and 130.
    if backend == "cpu":
        body = scaffolds.correct_body("matmul", "cpu").replace(
            "for (int64_t p = 0; p < g.k; ++p) {", "for (int64_t p = 0; p < g.k / 16 * 16; ++p) {")
    else:
        body = scaffolds.correct_body("matmul", "nvidia").replace(
            "for (int64_t p0 = 0; p0 < g.k; p0 += kTile) {",
            "for (int64_t p0 = 0; p0 + kTile <= g.k; p0 += kTile) {")
    assert body != scaffolds.correct_body("matmul", backend)
    return Wrong("matmul_ignores_k_tail", "matmul", backend,
                 r"wrong result on shape 37x45x29 \(M x K x N\) f32",
                 _with_body("matmul", backend, body))


def _matmul_one_barrier():
    # The barrier after the products is gone: a fast thread loads the next tiles into As and
    # Bs while slower ones still read the current ones (a write-after-read race).
    good = scaffolds.correct_body("matmul", "nvidia")
    second = "        __syncthreads();  // every thread done reading before the next tiles overwrite them\n"
    assert second in good
    body = good.replace(second, "        // missing: __syncthreads(), so the next tiles may overwrite these while read\n")
    return Wrong("matmul_missing_second_barrier", "matmul", "nvidia", r"racecheck: a data race",
                 _with_body("matmul", "nvidia", body))


def solutions(backend):
    """The known-wrong solutions for `backend`."""
    common = [_tail(backend), _low_precision(backend), _cached(backend), _out_of_bounds(backend),
              _matmul_k_tail(backend)]
    return common + ([_racy(), _matmul_one_barrier()] if backend == "nvidia" else [])
