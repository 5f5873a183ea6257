"""Scaffolds of the "student" variant of each operator (scripts/camp.py exercise).

A scaffold compiles as it is: its kernel body is a TODO between the two MARK lines
(writing nothing, so `camp.py check` fails with the first wrong element). The plan
function, the launch code and the registration are already wired. The memory-bound
exercises (kinds elementwise and axis) handle the dense layout only; other layouts are
declined (OPRT_ERR_NOT_SUPPORTED, reported by check as skipped) so the first kernel
stays short. The matmul exercise (kind matmul, the camp's capstone) accepts every
layout: its body reads A, B and C through the plan's strides.
"""

import textwrap

BEGIN = "// ---- TODO(student): begin ----"
END = "// ---- TODO(student): end ----"

# Per operator: kind, plan type, the math in words, hints for the body.
OPS = {
    "copy": {
        "kind": "elementwise",
        "math": "out[i] = in0[i] (bit for bit: NaN payloads included)",
        "hints": ["copy the stored value itself, no conversion through float"],
    },
    "vector_add": {
        "kind": "elementwise",
        "math": "out[i] = in0[i] + in1[i], computed in float and rounded once",
        "hints": ["widen both inputs to float, add, store with from_f32<T>"],
    },
    "relu": {
        "kind": "elementwise",
        "math": "out[i] = x > 0 ? x : scalar * x with x = in0[i] (scalar: negative_slope)",
        "hints": ["with scalar == 0 the result is max(x, 0): relu(-inf) is 0, not 0 * -inf = NaN",
                  "NaN stays NaN for every slope"],
    },
    "silu": {
        "kind": "elementwise",
        "math": "out[i] = x * sigmoid(x) = x / (1 + exp(-x)) with x = in0[i], computed in float",
        "hints": ["x / (1 + expf(-x)) is -inf / inf = NaN at x = -inf, where the limit is -0: "
                  "compute e = expf(-fabsf(x)), which never overflows, and sigmoid(x) as "
                  "(x >= 0 ? 1 : e) / (1 + e)",
                  "NaN stays NaN; silu(+inf) = +inf"],
    },
    "reduce_sum": {
        "kind": "axis",
        "check_out_axis": "false",
        "math": "out[row] = the sum of the row's axis_len elements, accumulated in float",
        "hints": ["an empty row (axis_len == 0) sums to 0",
                  "long rows: a single float accumulator loses precision; several partial sums "
                  "(or a tree) keep it"],
    },
    "matmul": {
        "kind": "matmul",
        "math": "C[i][j] = sum over p of A[i][p] * B[p][j], summed in float and rounded once",
        "hints": ["K == 0 gives C = 0 (the sums start at 0 and are still stored)",
                  "every layout reaches this body (transposed, strided, broadcast with stride "
                  "0): always index through the strides, never assume a stride of 1",
                  "next steps: the ladder in docs/kernels/matmul.md"],
    },
    "softmax": {
        "kind": "axis",
        "check_out_axis": "true",
        "math": "out[row][k] = exp(x[k] - max) / sum_j exp(x[j] - max), max over the row",
        "hints": ["three loops over the row: the max, the sum of exp(x - max), the division",
                  "special values: a NaN makes the row NaN (through the sum); a row of all -inf "
                  "gives NaN (exp(-inf - -inf) is NaN), as in PyTorch; skip NaN in the max "
                  "(x > m is false for NaN)"],
    },
}

_HEADER = """// Exercise: {op} on {backend_title}, the "student" variant (made by scripts/camp.py exercise).
// This file lives outside the reference kernels and is git-ignored; the build
// compiles it into libcamp_ops.so, where it registers itself as the variant
// "student" of {op} on the {backend} backend.
//   check:      python3 scripts/camp.py check {op} --backend {backend}
//   test:       python3 -m pytest tests/op_tests/test_cases.py -k {op} --backend {backend} --variant student
//   benchmark:  python3 tests/run_ops.py --op {op} --backend {backend} --mode bench --variant student
//   compare:    python3 tests/run_ops.py --op {op} --backend {backend} --mode bench --variant all
//   remove:     python3 scripts/camp.py reset {op} --backend {backend}
// Write the body between the TODO marks; everything else is wired already.
"""


def _hint_lines(spec, extra):
    """The hints as comment lines, each wrapped to the width of the code around it."""
    return "\n".join(textwrap.fill(h, width=100, initial_indent="    //  - ",
                                    subsequent_indent="    //    ")
                      for h in list(extra) + spec["hints"])


def render(op, backend):
    spec = OPS[op]
    header = _HEADER.format(op=op, backend=backend,
                            backend_title="the CPU" if backend == "cpu" else "an NVIDIA GPU")
    template = {("elementwise", "cpu"): _EW_CPU, ("axis", "cpu"): _AXIS_CPU,
                ("matmul", "cpu"): _MM_CPU, ("elementwise", "nvidia"): _EW_CUDA,
                ("axis", "nvidia"): _AXIS_CUDA, ("matmul", "nvidia"): _MM_CUDA}[
                    (spec["kind"], backend)]
    if spec["kind"] == "matmul":
        extra = _MM_HINTS[backend]
    elif spec["kind"] == "elementwise":
        extra = ["one loop over i in [0, n)" if backend == "cpu" else
                 "i = blockIdx.x * blockDim.x + threadIdx.x (64-bit: int64_t), then loop with "
                 "i += gridDim.x * blockDim.x (a grid-stride loop) while i < n",
                 "in1 is in0 for one-input operators"]
    else:
        extra = ["row r (0 <= r < p.outer) starts at in + in_off and out + out_off, from "
                 "axis_outer_offsets(p, r, &in_off, &out_off); its elements are consecutive",
                 "widen with to_f32(x), store with from_f32<T>(value)"]
        if backend == "nvidia":
            extra.insert(0, "one thread per row: r = blockIdx.x * blockDim.x + threadIdx.x "
                            "(int64_t), return when r >= p.outer")
    return header + template.format(op=op, math=spec["math"], hints=_hint_lines(spec, extra),
                                    begin=BEGIN, end=END,
                                    check_out_axis=spec.get("check_out_axis", "false"))


def correct_body(op, backend):
    """A correct body for the TODO region (the project's own test of the exercise flow)."""
    spec = OPS[op]
    conv = "" if backend == "cpu" else "dev::"
    if spec["kind"] == "matmul":
        return _MM_CPU_BODY if backend == "cpu" else _MM_CUDA_BODY
    if spec["kind"] == "elementwise":
        expr = {
            "copy": "in0[i]",
            "vector_add": f"{conv}from_f32<T>({conv}to_f32(in0[i]) + {conv}to_f32(in1[i]))",
            "relu": f"{conv}from_f32<T>(relu_f32({conv}to_f32(in0[i]), scalar))",
            "silu": f"{conv}from_f32<T>(silu_f32({conv}to_f32(in0[i])))",
        }[op]
        pre = ("    auto relu_f32 = [](float x, float s) {\n"
               "        const float neg = s == 0.0f ? (x != x ? x : 0.0f) : s * x;\n"
               "        return x > 0.0f ? x : neg;\n    };\n") if op == "relu" else ""
        if op == "silu":
            pre = ("    auto silu_f32 = [](float x) {\n"
                   "        const float e = expf(-fabsf(x));\n"
                   "        const float s = (x >= 0.0f ? 1.0f : e) / (1.0f + e);\n"
                   "        return s == 0.0f ? -0.0f : x * s;  // silu(-inf) = -0, the limit\n    };\n")
        if backend == "cpu":
            return pre + f"    for (int64_t i = 0; i < n; ++i) out[i] = {expr};\n"
        return pre + ("    for (int64_t i = int64_t(blockIdx.x) * blockDim.x + threadIdx.x; i < n;\n"
                      f"         i += int64_t(gridDim.x) * blockDim.x)\n        out[i] = {expr};\n")
    acc = "double" if backend == "cpu" else "float"
    rows = ("    for (int64_t r = 0; r < p.outer; ++r) {\n" if backend == "cpu" else
            "    const int64_t r = int64_t(blockIdx.x) * blockDim.x + threadIdx.x;\n"
            "    if (r >= p.outer) return;\n    {\n")
    body = rows + ("        int64_t io = 0, oo = 0;\n"
                   "        axis_outer_offsets(p, r, &io, &oo);\n"
                   "        const T *x = in + io;\n")
    if op == "reduce_sum":
        body += (f"        {acc} s = 0;\n"
                 f"        for (int64_t k = 0; k < p.axis_len; ++k) s += {conv}to_f32(x[k]);\n"
                 f"        out[oo] = {conv}from_f32<T>(float(s));\n    }}\n")
    else:
        body += ("        float m = -INFINITY;\n"
                 f"        for (int64_t k = 0; k < p.axis_len; ++k) {{\n"
                 f"            const float v = {conv}to_f32(x[k]);\n"
                 "            if (v > m) m = v;\n        }\n"
                 f"        {acc} s = 0;\n"
                 f"        for (int64_t k = 0; k < p.axis_len; ++k) s += expf({conv}to_f32(x[k]) - m);\n"
                 "        const float inv = float(1.0 / s);\n"
                 f"        for (int64_t k = 0; k < p.axis_len; ++k)\n"
                 f"            out[oo + k] = {conv}from_f32<T>(expf({conv}to_f32(x[k]) - m) * inv);\n    }}\n")
    return body


def replace_body(text, body):
    """The scaffold `text` with the TODO region's content replaced by `body`."""
    a = text.index(BEGIN)
    a = text.index("\n", a) + 1
    b = text.rindex("\n", 0, text.index(END)) + 1
    return text[:a] + body + text[b:]


# The end of every scaffold: the namespaces closed and the variant registered as "student".
def _registration(backend, plan):
    ns, enum = f"student_{backend}", f"OPRT_BACKEND_{backend.upper()}"
    return (f"}}}}  // namespace\n}}}}  // namespace oprt::{{op}}::{ns}\n\n"
            f"OPRT_REGISTER_STUDENT_VARIANT({{op}}, {enum}, {plan}, oprt::{{op}}::{ns}::plan,\n"
            f"                              oprt::{{op}}::{ns}::run)\n")


# A GPU scaffold's run(): the dtype picks the launch, then the launch is checked.
def _cuda_tail(plan):
    return f"""oprt_status_t run(const {plan} &p, const ExecArgs &a) {{{{
    // The frontend has checked the buffers and made their device current.
    switch (p.dtype) {{{{
    case OPRT_DTYPE_F32: launch<float>(p, a); break;
    case OPRT_DTYPE_F16: launch<dev::half_t>(p, a); break;
    case OPRT_DTYPE_BF16: launch<dev::bf16_t>(p, a); break;
    }}}}
    return gpu::check_launch(kOp, "student");
}}}}

""" + _registration("nvidia", plan)


_EW_CPU = """#include <cmath>
#include <cstdint>

#include "runtime/internal/dtype.h"
#include "runtime/internal/student.h"

namespace oprt::{op}::student_cpu {{
namespace {{

// {math}, for i in [0, n). T is the storage type: float, f16_t or bf16_t.
template <typename T>
void student_kernel(T *out, const T *in0, const T *in1, int64_t n, float scalar) {{
    {begin}
    // Hints:
{hints}
    (void)out, (void)in0, (void)in1, (void)n, (void)scalar;
    {end}
}}

// The variant's plan hook: this exercise runs dense tensors (element i of every
// operand at offset i); other layouts are declined with the reason.
oprt_status_t plan(ElementwisePlan &p) {{
    if (!p.contiguous)
        return fail(OPRT_ERR_NOT_SUPPORTED, "the {op} exercise handles dense tensors only (this layout is "
                                            "strided or broadcast)");
    p.kernel = 0;
    p.kernel_name = "student";
    p.workspace_bytes = 0;
    return OPRT_SUCCESS;
}}

template <typename T>
void run_typed(const ElementwisePlan &p, const ExecArgs &a) {{
    const T *in0 = static_cast<const T *>(a.in0);
    student_kernel<T>(static_cast<T *>(a.out), in0, p.num_inputs > 1 ? static_cast<const T *>(a.in1) : in0,
                      p.numel, p.scalar);
}}

oprt_status_t run(const ElementwisePlan &p, const ExecArgs &a) {{
    switch (p.dtype) {{
    case OPRT_DTYPE_F32: run_typed<float>(p, a); break;
    case OPRT_DTYPE_F16: run_typed<f16_t>(p, a); break;
    case OPRT_DTYPE_BF16: run_typed<bf16_t>(p, a); break;
    }}
    return OPRT_SUCCESS;
}}

""" + _registration("cpu", "ElementwisePlan")

_AXIS_CPU = """#include <cmath>
#include <cstdint>

#include "runtime/internal/dtype.h"
#include "runtime/internal/student.h"

namespace oprt::{op}::student_cpu {{
namespace {{

// {math}.
// p.outer rows of p.axis_len elements each. T is float, f16_t or bf16_t.
template <typename T>
void student_kernel(const AxisPlan &p, const T *in, T *out) {{
    {begin}
    // Hints:
{hints}
    (void)p, (void)in, (void)out;
    {end}
}}

// The variant's plan hook: this exercise runs rows that are dense along the
// axis (the last dim); other layouts are declined with the reason.
oprt_status_t plan(AxisPlan &p) {{
    if (!p.rows_contiguous(/*check_out_axis=*/{check_out_axis}))
        return fail(OPRT_ERR_NOT_SUPPORTED, "the {op} exercise handles dense rows along the last dim only");
    p.kernel = 0;
    p.kernel_name = "student";
    p.workspace_bytes = 0;
    return OPRT_SUCCESS;
}}

oprt_status_t run(const AxisPlan &p, const ExecArgs &a) {{
    switch (p.dtype) {{
    case OPRT_DTYPE_F32: student_kernel(p, static_cast<const float *>(a.in0), static_cast<float *>(a.out)); break;
    case OPRT_DTYPE_F16: student_kernel(p, static_cast<const f16_t *>(a.in0), static_cast<f16_t *>(a.out)); break;
    case OPRT_DTYPE_BF16: student_kernel(p, static_cast<const bf16_t *>(a.in0), static_cast<bf16_t *>(a.out)); break;
    }}
    return OPRT_SUCCESS;
}}

""" + _registration("cpu", "AxisPlan")

_CUDA_COMMON = """#include <cmath>
#include <cstdint>

#include "runtime/gpu/device_traits.cuh"
#include "runtime/gpu/gpu_runtime.h"
#include "runtime/internal/student.h"
"""

_EW_CUDA = _CUDA_COMMON + """
namespace oprt::{op}::student_nvidia {{
namespace {{

constexpr const char *kOp = "oprt_execute_{op} (student)";
constexpr int kThreads = 256;

// {math}, for i in [0, n). T is float, dev::half_t or dev::bf16_t.
template <typename T>
__global__ void student_kernel(T *out, const T *in0, const T *in1, int64_t n, float scalar) {{
    {begin}
    // Hints:
{hints}
    //  - widen with dev::to_f32(x), store with dev::from_f32<T>(value)
    (void)out, (void)in0, (void)in1, (void)n, (void)scalar;
    {end}
}}

// The variant's plan hook: dense tensors only; other layouts are declined.
oprt_status_t plan(ElementwisePlan &p) {{
    if (!p.contiguous)
        return fail(OPRT_ERR_NOT_SUPPORTED, "the {op} exercise handles dense tensors only (this layout is "
                                            "strided or broadcast)");
    p.kernel = 0;
    p.kernel_name = "student";
    p.workspace_bytes = 0;
    return OPRT_SUCCESS;
}}

template <typename T>
void launch(const ElementwisePlan &p, const ExecArgs &a) {{
    const T *in0 = static_cast<const T *>(a.in0);
    const T *in1 = p.num_inputs > 1 ? static_cast<const T *>(a.in1) : in0;
    // One thread per element, capped: the kernel's loop covers the rest.
    int64_t blocks = (p.numel + kThreads - 1) / kThreads;
    blocks = blocks < 1 ? 1 : (blocks > 65535 ? 65535 : blocks);
    student_kernel<T><<<unsigned(blocks), kThreads, 0, static_cast<dev::stream_t>(a.stream)>>>(
        static_cast<T *>(a.out), in0, in1, p.numel, p.scalar);
}}

""" + _cuda_tail("ElementwisePlan")

_AXIS_CUDA = _CUDA_COMMON + """
namespace oprt::{op}::student_nvidia {{
namespace {{

constexpr const char *kOp = "oprt_execute_{op} (student)";
constexpr int kThreads = 256;

// {math}.
// p.outer rows of p.axis_len elements each. T is float, dev::half_t or dev::bf16_t.
template <typename T>
__global__ void student_kernel(AxisPlan p, const T *in, T *out) {{
    {begin}
    // Hints:
{hints}
    //  - (use dev::to_f32 / dev::from_f32<T> here)
    (void)p, (void)in, (void)out;
    {end}
}}

// The variant's plan hook: rows dense along the last dim only; others are declined.
oprt_status_t plan(AxisPlan &p) {{
    if (!p.rows_contiguous(/*check_out_axis=*/{check_out_axis}))
        return fail(OPRT_ERR_NOT_SUPPORTED, "the {op} exercise handles dense rows along the last dim only");
    p.kernel = 0;
    p.kernel_name = "student";
    p.workspace_bytes = 0;
    return OPRT_SUCCESS;
}}

template <typename T>
void launch(const AxisPlan &p, const ExecArgs &a) {{
    // One thread per row to start with; a faster kernel may launch differently.
    int64_t blocks = (p.outer + kThreads - 1) / kThreads;
    blocks = blocks < 1 ? 1 : blocks;
    student_kernel<T><<<unsigned(blocks), kThreads, 0, static_cast<dev::stream_t>(a.stream)>>>(
        p, static_cast<const T *>(a.in0), static_cast<T *>(a.out));
}}

""" + _cuda_tail("AxisPlan")


# ---- matmul: the capstone -------------------------------------------------------------------

_MM_HINTS = {
    "cpu": [
        "first, the definition: for each (i, j) a float sum over p, stored with from_f32<T>; "
        "widen inputs with to_f32(x)",
        "faster, the i-k-j order: a row of float accumulators acc[0 .. N) per row i; for each "
        "p, acc[j] += A[i][p] * B[p][j] for every j, so the inner loop walks along a row of B "
        "and C (stride 1 when they are row-major: the compiler vectorizes it); then store the "
        "row of C",
        "the next step, cache blocking: C in tiles and K in slices, so that the slices of A "
        "and B in use stay in the caches (the CPU ladder's 'packed' step)",
    ],
    "nvidia": [
        "this thread's element of C: row i = blockIdx.y * kTile + threadIdx.y, column "
        "j = blockIdx.x * kTile + threadIdx.x (int64_t)",
        "walk K in tiles of kTile: per tile, each thread loads one element of A (row i, column "
        "p0 + threadIdx.x) and one of B (row p0 + threadIdx.y, column j) into __shared__ float "
        "arrays As[kTile][kTile] and Bs[kTile][kTile]; __syncthreads(); then kTile products "
        "As[threadIdx.y][p] * Bs[p][threadIdx.x] into a float accumulator; __syncthreads() again "
        "before the next tile overwrites the arrays",
        "tails: M, N and K need not be multiples of kTile: load 0.0f past M, N or K (a zero "
        "adds nothing) and store only where i < M and j < N; every thread must reach every "
        "__syncthreads(), so no early return before the loop",
        "widen with dev::to_f32(x), store with dev::from_f32<T>(value)",
    ],
}

_MM_STRIDES = """\
// C (M x N) = A (M x K) @ B (K x N), M = g.m, N = g.n, K = g.k, every operand
// through its strides in elements (from the plan; an input stride is 0 where the
// input is broadcast along that dim):
//   A[i][p] = a[i * g.a_row + p * g.a_col]
//   B[p][j] = b[p * g.b_row + j * g.b_col]
//   C[i][j] = c[i * g.c_row + j * g.c_col]"""

_MM_CPU = """#include <algorithm>
#include <cmath>
#include <cstdint>
#include <vector>

#include "runtime/internal/dtype.h"
#include "runtime/internal/student.h"

namespace oprt::{op}::student_cpu {{
namespace {{

// {math}.
""" + _MM_STRIDES + """
// T is the storage type: float, f16_t or bf16_t.
template <typename T>
void student_kernel(const MatmulPlan &g, const T *a, const T *b, T *c) {{
    {begin}
    // Hints:
{hints}
    (void)g, (void)a, (void)b, (void)c;
    {end}
}}

// The variant's plan hook: the body reads every operand through its strides, so this
// exercise accepts every layout (row- and column-major, strided, broadcast).
oprt_status_t plan(MatmulPlan &p) {{
    p.kernel = 0;
    p.kernel_name = "student";
    p.workspace_bytes = 0;
    return OPRT_SUCCESS;
}}

template <typename T>
void run_typed(const MatmulPlan &p, const ExecArgs &a) {{
    student_kernel<T>(p, static_cast<const T *>(a.in0), static_cast<const T *>(a.in1), static_cast<T *>(a.out));
}}

oprt_status_t run(const MatmulPlan &p, const ExecArgs &a) {{
    switch (p.dtype) {{
    case OPRT_DTYPE_F32: run_typed<float>(p, a); break;
    case OPRT_DTYPE_F16: run_typed<f16_t>(p, a); break;
    case OPRT_DTYPE_BF16: run_typed<bf16_t>(p, a); break;
    }}
    return OPRT_SUCCESS;
}}

""" + _registration("cpu", "MatmulPlan")

_MM_CUDA = _CUDA_COMMON + """
namespace oprt::{op}::student_nvidia {{
namespace {{

constexpr const char *kOp = "oprt_execute_{op} (student)";
// The launch: one block of kTile x kTile threads per kTile x kTile tile of C, thread
// (threadIdx.y, threadIdx.x) owning one element; blockIdx.x walks the tiles along N,
// blockIdx.y along M. 32 x 32 = 1024 threads, the most a block may have; 16 also works.
constexpr int kTile = 32;

// {math}.
""" + _MM_STRIDES + """
// T is float, dev::half_t or dev::bf16_t.
template <typename T>
__global__ void __launch_bounds__(kTile * kTile) student_kernel(MatmulPlan g, const T *a, const T *b, T *c) {{
    {begin}
    // Hints:
{hints}
    (void)g, (void)a, (void)b, (void)c;
    {end}
}}

// The variant's plan hook: the body reads every operand through its strides, so every
// layout is accepted; only a C too tall for the grid (65535 rows of blocks) is declined.
oprt_status_t plan(MatmulPlan &p) {{
    if ((p.m + kTile - 1) / kTile > 65535)
        return fail(OPRT_ERR_NOT_SUPPORTED, "the {op} exercise launches a row of blocks per %d rows of C, "
                    "at most 65535 rows of blocks (here M = %lld)", kTile, (long long)p.m);
    p.kernel = 0;
    p.kernel_name = "student";
    p.workspace_bytes = 0;
    return OPRT_SUCCESS;
}}

template <typename T>
void launch(const MatmulPlan &p, const ExecArgs &a) {{
    // The frontend never runs an empty C, so both grid dimensions are at least 1.
    const dim3 threads(kTile, kTile);
    const dim3 blocks(unsigned((p.n + kTile - 1) / kTile), unsigned((p.m + kTile - 1) / kTile));
    student_kernel<T><<<blocks, threads, 0, static_cast<dev::stream_t>(a.stream)>>>(
        p, static_cast<const T *>(a.in0), static_cast<const T *>(a.in1), static_cast<T *>(a.out));
}}

""" + _cuda_tail("MatmulPlan")

# The i-k-j order: a row of C summed in float, one pass over B's row p per p.
_MM_CPU_BODY = """\
    std::vector<float> acc(size_t(g.n));
    for (int64_t i = 0; i < g.m; ++i) {
        std::fill(acc.begin(), acc.end(), 0.0f);
        for (int64_t p = 0; p < g.k; ++p) {
            const float aip = to_f32(a[i * g.a_row + p * g.a_col]);
            const T *brow = b + p * g.b_row;
            for (int64_t j = 0; j < g.n; ++j) acc[size_t(j)] += aip * to_f32(brow[j * g.b_col]);
        }
        for (int64_t j = 0; j < g.n; ++j) c[i * g.c_row + j * g.c_col] = from_f32<T>(acc[size_t(j)]);
    }
"""

# Shared-memory tiles: the block stages a kTile x kTile tile of A and of B per step of K,
# and each thread reads its row of As and column of Bs from there.
_MM_CUDA_BODY = """\
    __shared__ float As[kTile][kTile];
    __shared__ float Bs[kTile][kTile];
    const int ty = threadIdx.y, tx = threadIdx.x;
    const int64_t i = int64_t(blockIdx.y) * kTile + ty;
    const int64_t j = int64_t(blockIdx.x) * kTile + tx;
    float acc = 0.0f;
    for (int64_t p0 = 0; p0 < g.k; p0 += kTile) {
        const int64_t pa = p0 + tx, pb = p0 + ty;  // this thread's column of A, row of B
        As[ty][tx] = i < g.m && pa < g.k ? dev::to_f32(a[i * g.a_row + pa * g.a_col]) : 0.0f;
        Bs[ty][tx] = pb < g.k && j < g.n ? dev::to_f32(b[pb * g.b_row + j * g.b_col]) : 0.0f;
        __syncthreads();  // both tiles complete
        for (int p = 0; p < kTile; ++p) acc += As[ty][p] * Bs[p][tx];
        __syncthreads();  // every thread done reading before the next tiles overwrite them
    }
    if (i < g.m && j < g.n) c[i * g.c_row + j * g.c_col] = dev::from_f32<T>(acc);
"""
