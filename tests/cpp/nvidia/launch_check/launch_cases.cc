// The cases of the launch check (scripts/ci/launch_check.sh): every operator
// on the nvidia backend over shapes, dtypes, layouts and misaligned data, each
// descriptor run with the plan's kernel ("auto") and with every step of the
// operator's ladder. Linked against camp_ops_standin, so nothing executes:
// the stand-in runtime prints each launch, and this program prints before
// them the case ("CASE ..."), its buffers ("BUFFER name first end", byte
// addresses; each buffer has a region of its own, from CAMP_LAUNCH_BASE) and
// per variant the kernel name, the workspace and any error.
// check_launches.py reads it all.
#include <operator_runtime/api.h>
#include <operator_runtime/ops/copy.h>
#include <operator_runtime/ops/matmul.h>
#include <operator_runtime/ops/reduce_sum.h>
#include <operator_runtime/ops/relu.h>
#include <operator_runtime/ops/silu.h>
#include <operator_runtime/ops/softmax.h>
#include <operator_runtime/ops/vector_add.h>

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <utility>
#include <vector>

namespace {

using Dims = std::vector<int64_t>;

// A tensor of the case: shape, strides (elements) and the offset of its
// first element (elements) from its region's start.
struct Tensor {
    Dims shape, strides;
    int64_t offset = 0;
};

Dims dense(const Dims &shape) {
    Dims s(shape.size());
    int64_t stride = 1;
    for (size_t i = shape.size(); i-- > 0;) s[i] = stride, stride *= shape[i];
    return s;
}
Tensor tensor(const Dims &shape, Dims strides = {}, int64_t offset = 0) {
    return Tensor{shape, strides.empty() ? dense(shape) : strides, offset};
}
std::string text(const Dims &v) {
    std::string s;
    for (int64_t x : v) s += (s.empty() ? "" : "x") + std::to_string(x);
    return s.empty() ? "scalar" : s;
}

// Buffer i starts at region(i), 2^37 bytes each from the base (the workspace:
// region 8). check_launches.py runs the cases at two bases: an argument word
// that moves with the base is a pointer, one that does not is data.
uintptr_t g_base = uintptr_t(0x7000) << 32;
uintptr_t region(int i) { return g_base + (uintptr_t(i) << 37); }

// Elements from a tensor's first to one past its last (0 when empty).
int64_t span(const Tensor &t) {
    int64_t last = 0;
    for (size_t d = 0; d < t.shape.size(); ++d) {
        if (t.shape[d] == 0) return 0;
        last += (t.shape[d] - 1) * t.strides[d];
    }
    return t.offset + last + 1;
}

// The view of t in region(index), printed as a BUFFER line.
oprt_tensor_view_t view(const char *name, int index, const Tensor &t, oprt_dtype_t dtype) {
    const int64_t esize = dtype == OPRT_DTYPE_F32 ? 4 : 2;
    oprt_tensor_view_t v{};
    v.data = reinterpret_cast<void *>(region(index) + uintptr_t(t.offset * esize));
    v.dtype = dtype;
    v.ndim = int32_t(t.shape.size());
    for (size_t d = 0; d < t.shape.size(); ++d) {
        v.shape[d] = t.shape[d];
        v.strides[d] = t.strides[d];
    }
    const uintptr_t first = reinterpret_cast<uintptr_t>(v.data);
    const int64_t elements = span(t);
    std::fprintf(stderr, "BUFFER %s %#llx %#llx\n", name, (unsigned long long)first,
                 (unsigned long long)(elements == 0 ? first : region(index) + uintptr_t(elements * esize)));
    return v;
}

// The per-operator calls, the same for every operator.
template <typename Desc>
struct OpCalls {
    oprt_status_t (*list)(oprt_backend_t, const char **, int, int *);
    oprt_status_t (*set_variant)(Desc, const char *);
    oprt_status_t (*workspace)(Desc, size_t *);
    oprt_status_t (*kernel_name)(Desc, const char **);
    oprt_status_t (*destroy)(Desc);
};

// Runs desc (created with status s) with "auto" and every ladder step;
// exec(workspace, bytes) executes it.
template <typename Desc, typename Exec>
void run_variants(oprt_status_t s, Desc desc, const OpCalls<Desc> &op, Exec exec) {
    if (s != OPRT_SUCCESS) {
        std::fprintf(stderr, "  create: %s: %s\n", oprt_status_string(s), oprt_last_error_message());
        return;
    }
    const char *names[32];
    int count = 0;
    op.list(OPRT_BACKEND_NVIDIA, names, 32, &count);
    std::vector<const char *> variants = {"auto"};
    for (int i = 0; i < count && i < 32; ++i) variants.push_back(names[i]);
    for (const char *v : variants) {
        if ((s = op.set_variant(desc, v)) != OPRT_SUCCESS) {
            std::fprintf(stderr, "  variant %s: declined: %s\n", v, oprt_status_string(s));
            continue;
        }
        size_t bytes = 0;
        const char *kernel = "";
        op.workspace(desc, &bytes);
        op.kernel_name(desc, &kernel);
        std::fprintf(stderr, "  variant %s kernel=%s workspace=%zu\n", v, kernel, bytes);
        const uintptr_t workspace = region(8);
        std::fprintf(stderr, "BUFFER workspace %#llx %#llx\n", (unsigned long long)workspace,
                     (unsigned long long)(workspace + bytes));
        if ((s = exec(reinterpret_cast<void *>(workspace), bytes)) != OPRT_SUCCESS)
            std::fprintf(stderr, "  ERROR execute: %s: %s\n", oprt_status_string(s), oprt_last_error_message());
    }
    op.destroy(desc);
}

#define OP_CALLS(op)                                                                                            \
    OpCalls<oprt_##op##_descriptor_t> {                                                                         \
        oprt_list_##op##_variants, oprt_set_##op##_variant, oprt_get_##op##_workspace_size,                     \
            oprt_get_##op##_kernel_name, oprt_destroy_##op##_descriptor                                         \
    }

void header(const char *op, oprt_dtype_t dtype, const std::string &what) {
    std::fprintf(stderr, "CASE %s %s %s\n", op, oprt_dtype_string(dtype), what.c_str());
}

// copy, relu and silu of in into out (out with in's shape).
void unary(oprt_dtype_t dt, const Tensor &in, const Tensor &out) {
    const std::string what = "in=" + text(in.shape) + "/" + text(in.strides) + "+" + std::to_string(in.offset) +
                             " out=" + text(out.strides) + "+" + std::to_string(out.offset);
    header("copy", dt, what);
    oprt_tensor_view_t x = view("in", 0, in, dt), y = view("out", 1, out, dt);
    oprt_copy_descriptor_t copy = nullptr;
    oprt_status_t s = oprt_create_copy_descriptor(&copy, &y, &x);
    run_variants(s, copy, OP_CALLS(copy),
                 [&](void *w, size_t n) { return oprt_execute_copy(copy, w, n, y.data, x.data, nullptr); });

    header("relu", dt, what);
    x = view("in", 0, in, dt), y = view("out", 1, out, dt);
    oprt_relu_descriptor_t relu = nullptr;
    s = oprt_create_relu_descriptor(&relu, &y, &x, 0.01f);
    run_variants(s, relu, OP_CALLS(relu),
                 [&](void *w, size_t n) { return oprt_execute_relu(relu, w, n, y.data, x.data, nullptr); });

    header("silu", dt, what);
    x = view("in", 0, in, dt), y = view("out", 1, out, dt);
    oprt_silu_descriptor_t silu = nullptr;
    s = oprt_create_silu_descriptor(&silu, &y, &x);
    run_variants(s, silu, OP_CALLS(silu),
                 [&](void *w, size_t n) { return oprt_execute_silu(silu, w, n, y.data, x.data, nullptr); });
}

void vector_add(oprt_dtype_t dt, const Tensor &a, const Tensor &b, const Tensor &out) {
    header("vector_add", dt,
           "a=" + text(a.shape) + "/" + text(a.strides) + " b=" + text(b.shape) + "/" + text(b.strides) + "+" +
               std::to_string(b.offset) + " out=" + text(out.shape));
    const oprt_tensor_view_t x = view("a", 0, a, dt), y = view("b", 2, b, dt), z = view("out", 1, out, dt);
    oprt_vector_add_descriptor_t d = nullptr;
    const oprt_status_t s = oprt_create_vector_add_descriptor(&d, &z, &x, &y);
    run_variants(s, d, OP_CALLS(vector_add),
                 [&](void *w, size_t n) { return oprt_execute_vector_add(d, w, n, z.data, x.data, y.data, nullptr); });
}

// softmax and reduce_sum over `axis` (reduce_sum's output keeps the axis as size 1).
void axis_ops(oprt_dtype_t dt, const Tensor &in, int64_t axis, int64_t out_offset = 0) {
    const std::string what = "in=" + text(in.shape) + "/" + text(in.strides) + "+" + std::to_string(in.offset) +
                             " axis=" + std::to_string(axis) + " out+" + std::to_string(out_offset);
    header("softmax", dt, what);
    oprt_tensor_view_t x = view("in", 0, in, dt), y = view("out", 1, tensor(in.shape, {}, out_offset), dt);
    oprt_softmax_descriptor_t softmax = nullptr;
    oprt_status_t s = oprt_create_softmax_descriptor(&softmax, &y, &x, axis);
    run_variants(s, softmax, OP_CALLS(softmax),
                 [&](void *w, size_t n) { return oprt_execute_softmax(softmax, w, n, y.data, x.data, nullptr); });
    if (in.shape.empty()) return;

    header("reduce_sum", dt, what);
    Dims kept = in.shape;
    kept[size_t(axis < 0 ? axis + int64_t(kept.size()) : axis)] = 1;
    x = view("in", 0, in, dt), y = view("out", 1, tensor(kept, {}, out_offset), dt);
    oprt_reduce_sum_descriptor_t sum = nullptr;
    s = oprt_create_reduce_sum_descriptor(&sum, &y, &x, axis);
    run_variants(s, sum, OP_CALLS(reduce_sum),
                 [&](void *w, size_t n) { return oprt_execute_reduce_sum(sum, w, n, y.data, x.data, nullptr); });
}

// out (M x N) = a (M x K) @ b (K x N), each operand row-major or transposed (column-major).
void matmul(oprt_dtype_t dt, int64_t M, int64_t N, int64_t K, bool a_transposed, bool b_transposed = false) {
    header("matmul", dt,
           std::to_string(M) + "x" + std::to_string(N) + "x" + std::to_string(K) + (a_transposed ? " a^T" : "") +
               (b_transposed ? " b^T" : ""));
    const Tensor a = a_transposed ? tensor({M, K}, {1, M}) : tensor({M, K});
    const Tensor b = b_transposed ? tensor({K, N}, {1, K}) : tensor({K, N});
    const oprt_tensor_view_t x = view("a", 0, a, dt), y = view("b", 2, b, dt),
                             z = view("out", 1, tensor({M, N}), dt);
    oprt_matmul_descriptor_t d = nullptr;
    const oprt_status_t s = oprt_create_matmul_descriptor(&d, &z, &x, &y);
    run_variants(s, d, OP_CALLS(matmul),
                 [&](void *w, size_t n) { return oprt_execute_matmul(d, w, n, z.data, x.data, y.data, nullptr); });
}

// Random cases, the same every run (a fixed seed): 1 to 4 dimensions of
// lengths around powers of two (ones and zeros among them), strides dense,
// padded, transposed or broadcast (inputs), data 0-7 elements off alignment.
struct Random {
    uint64_t state = 0x9E3779B97F4A7C15ull;
    uint64_t next() {  // xorshift64*
        state ^= state >> 12, state ^= state << 25, state ^= state >> 27;
        return state * 0x2545F4914F6CDD1Dull;
    }
    int64_t below(int64_t n) { return int64_t(next() % uint64_t(n)); }
    int64_t length() {
        const int64_t r = below(20);
        if (r == 0) return 0;
        if (r < 3) return 1;
        const int64_t p = int64_t(1) << below(17);
        return p + below(3) - 1 > 0 ? p + below(3) - 1 : 1;
    }
    Tensor tensor_of(const Dims &shape, bool input) {
        Dims strides = dense(shape);
        const int64_t kind = below(input ? 4 : 3);
        if (kind == 1) {  // rows padded by up to 8 elements
            Dims padded = shape;
            padded.back() += below(9);
            strides = dense(padded);
        }
        if (kind == 2) {  // the first and last dimensions' strides swapped (column-major for 2-D)
            Dims swapped = shape;
            std::swap(swapped.front(), swapped.back());
            strides = dense(swapped);
            std::swap(strides.front(), strides.back());
        }
        if (kind == 3) strides[size_t(below(int64_t(shape.size())))] = 0;  // broadcast one dimension
        return Tensor{shape, strides, below(8)};
    }
};

void random_cases(oprt_dtype_t dt, int count) {
    Random r;
    r.state += uint64_t(dt) * 7919;
    // Each tensor within its region (launch_cases' buffers must not overlap).
    const int64_t max_span = (int64_t(1) << 37) / (dt == OPRT_DTYPE_F32 ? 4 : 2);
    for (int i = 0; i < count; ++i) {
        Dims shape(size_t(1 + r.below(4)));
        for (int64_t &n : shape) n = r.length();
        const Tensor out = r.tensor_of(shape, false), a = r.tensor_of(shape, true), b = r.tensor_of(shape, true);
        if (span(out) > max_span || span(a) > max_span || span(b) > max_span) continue;
        switch (r.below(3)) {
        case 0: unary(dt, a, out); break;
        case 1: vector_add(dt, a, b, out); break;
        default: axis_ops(dt, out, r.below(int64_t(shape.size())), r.below(8));
        }
    }
}

}  // namespace

int main() {
    if (const char *base = std::getenv("CAMP_LAUNCH_BASE")) g_base = uintptr_t(std::strtoull(base, nullptr, 16));
    if (oprt_set_backend(OPRT_BACKEND_NVIDIA) != OPRT_SUCCESS) {
        std::fprintf(stderr, "ERROR no nvidia backend: %s\n", oprt_last_error_message());
        return 1;
    }
    const oprt_dtype_t dtypes[] = {OPRT_DTYPE_F32, OPRT_DTYPE_F16, OPRT_DTYPE_BF16};
    const int64_t kMaxElements = int64_t(1) << 34;
    for (oprt_dtype_t dt : dtypes) {
        // Elementwise: sizes around the vector, block and grid limits; strided,
        // transposed, broadcast and misaligned operands.
        for (int64_t n : {int64_t(1), int64_t(7), int64_t(1000), int64_t(1) << 20, (int64_t(1) << 20) + 3,
                          int64_t(1) << 31, (int64_t(1) << 32) + 5}) {
            unary(dt, tensor({n}), tensor({n}));
            unary(dt, tensor({n}, {}, 1), tensor({n}, {}, 1));
            unary(dt, tensor({n}, {}, 3), tensor({n}));
            unary(dt, tensor({n}, {}, 2), tensor({n}, {}, 2));  // 4- and 8-byte aligned, not 16
            unary(dt, tensor({n}, {}, 4), tensor({n}, {}, 4));
            unary(dt, tensor({n}), tensor({n}, {}, 2));  // alike only at 4 or 8 bytes: narrower vectors
            unary(dt, tensor({n}), tensor({n}, {}, 4));
            vector_add(dt, tensor({n}), tensor({n}), tensor({n}));
            vector_add(dt, tensor({n}), tensor({n}, {}, 1), tensor({n}));
            vector_add(dt, tensor({n}), tensor({n}, {}, 2), tensor({n}));
            vector_add(dt, tensor({n}), tensor({n}, {}, 4), tensor({n}));
            vector_add(dt, tensor({n}), tensor({1}, {0}), tensor({n}));
        }
        for (Dims sh : {Dims{3, 5}, Dims{1024, 1000}, Dims{4096, 4097}, Dims{2, 3, 4, 5}}) {
            Dims rev(sh.rbegin(), sh.rend()), tr = dense(rev);
            Dims trs(tr.rbegin(), tr.rend());  // sh viewed transposed
            unary(dt, tensor(sh, trs), tensor(sh));
            Dims padded = dense(sh);
            for (size_t d = 0; d + 1 < sh.size(); ++d) padded[d] *= 2;
            unary(dt, tensor(sh, padded), tensor(sh, padded, 1));
            Dims row = sh;
            row[0] = 1;
            vector_add(dt, tensor(sh), tensor(sh, [&] { Dims s = dense(row); s[0] = 0; return s; }()), tensor(sh));
            vector_add(dt, tensor(sh, trs), tensor(sh), tensor(sh));
        }
        for (Dims sh : {Dims{4096, 4096}, Dims{4096, 4100}, Dims{65536, 65537}}) {  // broadcasts, 32- and 64-bit indices
            unary(dt, tensor(sh, {0, 0}), tensor(sh));
            vector_add(dt, tensor(sh, {0, 1}), tensor(sh), tensor(sh));
            vector_add(dt, tensor(sh, {0, 0}), tensor(sh), tensor(sh));
            unary(dt, tensor(sh, {0, 1}), tensor(sh));
            unary(dt, tensor(sh, {1, 0}), tensor(sh));
            unary(dt, tensor(sh, {1, sh[0]}), tensor(sh));
            vector_add(dt, tensor(sh), tensor(sh, {0, 1}, 2), tensor(sh));
            vector_add(dt, tensor(sh), tensor(sh, {1, 0}), tensor(sh));
            vector_add(dt, tensor(sh, {}, 2), tensor(sh, {}, 2), tensor(sh, {}, 2));
        }
        unary(dt, tensor({0, 5}), tensor({0, 5}));
        unary(dt, tensor({}), tensor({}));

        // softmax and reduce_sum: dense rows of many lengths and counts, the
        // first axis, inner runs; then offsets, padding and strided axes.
        const int64_t lens[] = {1,    2,    7,    16,   31,    32,    33,    63,    64,    100,    128,    129,
                                255,  256,  300,  500,  512,   513,   1000,  1024,  1025,  1280,   1500,   1536,
                                2000, 2048, 2303, 2304, 2305,  3000,  3071,  3072,  3073,  3840,   4096,   4097,
                                5000, 6144, 8192, 8193, 12289, 16383, 16384, 16385, 20000, 32768,  50257,  65536,
                                100000, 131072, 262144, 1048576};
        for (int64_t L : lens)
            for (int64_t rows : {1, 3, 64, 131, 144, 784, 1008, 2048, 4080, 16384, 65536}) {
                if (rows * L > kMaxElements) continue;
                axis_ops(dt, tensor({rows, L}), 1);
                axis_ops(dt, tensor({rows, L}), 0);
            }
        for (int64_t inner : {2, 3, 8, 32, 100, 1024, 4096})
            for (int64_t L : {2, 7, 64, 1000, 4096, 65536})
                for (int64_t outer : {1, 7, 144, 4096})
                    if (outer * L * inner <= kMaxElements) axis_ops(dt, tensor({outer, L, inner}), 1);
        for (int64_t L : {7, 64, 100, 300, 1000, 1024, 1280, 1536, 2000, 2304, 3000, 3840, 4096, 5000, 8192, 12289,
                          16384, 20000, 65536, 131072, 262144})
            for (int64_t rows : {3, 144, 1008, 2048, 4080, 65536}) {
                const Dims sh = {rows, L};
                axis_ops(dt, tensor(sh, {}, 1), 1, 1);  // both off 16-byte boundaries, alike
                axis_ops(dt, tensor(sh, {}, 3), 1, 3);
                axis_ops(dt, tensor(sh, {}, 1), 1, 0);  // unlike
                axis_ops(dt, tensor(sh, {}, 8), 1, 16);
                axis_ops(dt, tensor(sh, {L + 8, 1}), 1);  // padded rows
                axis_ops(dt, tensor(sh, {L + 3, 1}), 1, 5);
                axis_ops(dt, tensor(sh, {1, rows}), 1);   // a transposed input
                axis_ops(dt, tensor({2, rows, L}), 2);
                axis_ops(dt, tensor({2, rows, L}), 0);
            }
        for (int64_t n : {int64_t(1) << 20, int64_t(3) << 20, int64_t(1) << 22, int64_t(1) << 23, int64_t(1) << 26,
                          int64_t(1) << 27, int64_t(1000003)})
            axis_ops(dt, tensor({n}), 0);
        for (Dims sh : {Dims{128, 65536}, Dims{127, 65536}, Dims{120, 65536}, Dims{64, 131072}, Dims{65536, 128},
                        Dims{65536, 1024}, Dims{32768, 128}, Dims{262144, 128}, Dims{4096, 4096}, Dims{1024, 1024},
                        Dims{16384, 16384}, Dims{8, 33554432}, Dims{16, 131072}, Dims{16, 1048576},
                        Dims{32, 262144}, Dims{9, 1048576}})  // the last four: clusters of 4-16 blocks a row
            for (int64_t axis : {0, 1}) axis_ops(dt, tensor(sh), axis);
        // Long rows about the softmax plan's cluster bounds (blocks a row, waves), as in
        // tests/cpp/nvidia/plan_paths_test.cc.
        for (Dims sh : {Dims{300, 16392}, Dims{150, 40000}, Dims{300, 60000}, Dims{40, 65536}, Dims{20, 131072},
                        Dims{8, 65536}, Dims{4, 65536}, Dims{20, 32768}, Dims{32, 32768}, Dims{12, 262144},
                        Dims{300, 140000}, Dims{300, 131072}, Dims{9000, 16392}, Dims{100, 20000},
                        Dims{132, 32768}, Dims{16, 40000}})
            axis_ops(dt, tensor(sh), 1);
        for (int64_t rows : {int64_t(7), int64_t(1) << 16, int64_t(1) << 18, int64_t(1) << 20})
            for (int64_t L : {2, 7, 64, 1000}) {
                if (rows * L * 2 > kMaxElements) continue;
                axis_ops(dt, tensor({rows, L}, {2 * L, 2}), 1);  // a strided axis
                axis_ops(dt, tensor({rows, L}, {1, rows}), 1);
            }
        axis_ops(dt, tensor({0, 5}), 1);
        axis_ops(dt, tensor({5, 0}), 1);
        axis_ops(dt, tensor({0, 1048576}), 1);  // empty, row-major strides: no row count to divide by
        axis_ops(dt, tensor({0, 1048576}), 0);
        axis_ops(dt, tensor({}), 0);

        // matmul: tile edges, long K, a transposed operand.
        for (int64_t m : {16, 64, 8192}) {
            matmul(dt, m, 8192, 8192, false);
            matmul(dt, m, 8192, 8192, false, true);
        }
        for (int64_t m : {32, 256, 2048})
            for (int64_t n : {256, 2048, 8192}) {
                matmul(dt, m, n, 4096, false);
                matmul(dt, m, n, 4096, false, true);
            }
        for (int64_t m : {1, 61, 64, 128, 1000, 4096})
            for (int64_t n : {1, 64, 999, 4096})
                for (int64_t k : {1, 64, 1000, 4096}) {
                    matmul(dt, m, n, k, false);
                    if (m == 1000) matmul(dt, m, n, k, true);
                }
    }
    for (oprt_dtype_t dt : dtypes) random_cases(dt, 2000);
    std::fprintf(stderr, "END\n");
    return 0;
}
