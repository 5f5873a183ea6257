// libFuzzer target: copy, vector_add, relu and silu on the CPU backend, through
// create, workspace query, execute and destroy, with fuzzed views (ndim,
// shapes, strides, dtypes, broadcasting), NULL, misaligned, shifted and
// in-place data pointers, relu slopes and workspace sizes.
//
// Findings: a crash or sanitizer report; a call the model says must fail that
// succeeds, or one that must succeed that fails; a failure without a message
// naming the operator; a failed execute that wrote memory; a successful one
// whose output differs from the reference (bit-exact: one f32 operation, one
// rounding), that wrote outside the output's elements or changed an input.
#include <memory>

#include "fuzz_support.h"

namespace {

using fz::Block;
using fz::View;

enum Op { kCopy, kVectorAdd, kRelu, kSilu };
const char *const kOpNames[] = {"copy", "vector_add", "relu", "silu"};

// Numpy broadcasting of `in` to `out`: in's strides aligned to out's dims.
bool broadcast(const oprt_tensor_view_t &in, const oprt_tensor_view_t &out, int64_t *strides) {
    const int lead = out.ndim - in.ndim;
    for (int j = 0; j < -lead; ++j)
        if (in.shape[j] != 1) return false;
    for (int i = 0; i < out.ndim; ++i) {
        const int j = i - lead;
        if (j < 0) strides[i] = 0;
        else if (in.shape[j] == out.shape[i]) strides[i] = in.strides[j];
        else if (in.shape[j] == 1) strides[i] = 0;
        else return false;
    }
    return true;
}

bool same_layout(const oprt_tensor_view_t &a, const oprt_tensor_view_t &b) {
    if (a.ndim != b.ndim) return false;
    for (int d = 0; d < a.ndim; ++d)
        if (a.shape[d] != b.shape[d] || (a.shape[d] > 1 && a.strides[d] != b.strides[d])) return false;
    return true;
}

// An input view related to out: same shape, a broadcast form of it, or unrelated.
View pick_input(FuzzedDataProvider &fdp, const View &out, int dtype, bool *absurd) {
    const uint8_t mode = fdp.ConsumeIntegral<uint8_t>();
    if (mode >= 250) {
        View v;
        v.is_null = true;
        return v;
    }
    if (mode >= 220 || out.is_null || out.v.ndim < 0 || out.v.ndim > OPRT_MAX_DIMS)
        return fz::pick_view(fdp, dtype, absurd);
    View v;
    fz::set_raw_dtype(v.v, dtype);
    const int n = out.v.ndim;
    if (mode < 120) {  // same shape
        v.v.ndim = n;
        for (int d = 0; d < n; ++d) v.v.shape[d] = out.v.shape[d];
    } else {  // broadcast: leading dims dropped (or extra leading 1s), some dims 1
        const int ndim = std::clamp(n - fdp.ConsumeIntegralInRange<int>(-2, n), 0, OPRT_MAX_DIMS);
        v.v.ndim = ndim;
        for (int j = 0; j < ndim; ++j) {
            const int i = j + (n - ndim);
            v.v.shape[j] = i < 0 || fdp.ConsumeIntegralInRange<int>(0, 2) == 0 ? 1 : out.v.shape[i];
        }
    }
    bool nested;
    fz::pick_strides(fdp, v.v, &nested, absurd);
    return v;
}

float pick_slope(FuzzedDataProvider &fdp) {
    const uint8_t b = fdp.ConsumeIntegral<uint8_t>();
    static const float slopes[] = {0.0f, 0.01f, 0.1f, -0.5f, 1.0f, 2.0f, -0.0f, 1e-40f, 3e38f,
                                   HUGE_VALF, -HUGE_VALF, __builtin_nanf("")};
    if (b < 200) return slopes[b % 12];
    return fdp.ConsumeFloatingPoint<float>();
}

// Where an operand's data lives for one execute.
enum class Place { kOwn, kOffsetElement, kMisaligned, kNull, kAliasOut, kShiftedOut, kAliasIn0 };

struct Operand {
    View view;
    fz::Extent ext;
    Place place = Place::kOwn;
    int64_t shift = 0;  // kShiftedOut: elements past out's data
    std::unique_ptr<Block> block;
    uint8_t *ptr = nullptr;
    int64_t bstrides[OPRT_MAX_DIMS] = {};  // inputs: strides broadcast to out's dims
};

double f32(double x) { return double(float(x)); }

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    FuzzedDataProvider fdp(data, size);
    fz::context().clear();
    // Small shapes run thousands of times a second; one input in 64 may pass the
    // parallel grain (kParallelGrain, 2^15; elementwise has no longer threshold) to
    // reach the threaded loops.
    const bool big = fdp.ConsumeIntegral<uint8_t>() < 4;
    fz::shape_budget() = big ? 1 << 16 : 1 << 10;
    fz::alloc_budget() = big ? fz::kMaxAllocElems : 1 << 14;
    oprt_set_backend(OPRT_BACKEND_CPU);

    const Op op = Op(fdp.ConsumeIntegralInRange<int>(0, 3));
    const char *name = kOpNames[op];
    const int num_inputs = op == kVectorAdd ? 2 : 1;
    bool absurd = false;
    const int dtype = fz::pick_dtype(fdp);

    Operand ops[3];
    ops[0].view = fz::pick_view(fdp, dtype, &absurd);
    ops[0].view.is_null = fdp.ConsumeIntegral<uint8_t>() == 255;
    for (int k = 1; k <= num_inputs; ++k) {
        const int dt = fdp.ConsumeIntegral<uint8_t>() < 235 ? dtype : fz::pick_dtype(fdp);
        ops[k].view = pick_input(fdp, ops[0].view, dt, &absurd);
    }
    const float slope = op == kRelu ? pick_slope(fdp) : 0.0f;
    const bool null_desc = fdp.ConsumeIntegral<uint8_t>() == 255;

    // The model of create.
    const char *defect = nullptr;
    for (int k = 0; k <= num_inputs && !defect; ++k) defect = fz::view_defect(ops[k].view);
    for (int k = 1; k <= num_inputs && !defect; ++k)
        if (fz::raw_dtype(ops[k].view.v) != dtype) defect = "dtype mismatch";
    const oprt_tensor_view_t &out = ops[0].view.v;
    if (!defect) {
        for (int k = 0; k <= num_inputs; ++k) ops[k].ext = fz::extent_of(ops[k].view.v);
        for (int k = 1; k <= num_inputs && !defect; ++k)
            if (!broadcast(ops[k].view.v, out, ops[k].bstrides)) defect = "shapes do not broadcast";
    }
    if (!defect && ops[0].ext.numel > 0) {
        for (int d = 0; d < out.ndim; ++d)
            if (out.shape[d] > 1 && out.strides[d] == 0) defect = "output broadcasts";
        if (!defect && ops[0].ext.numel > ops[0].ext.elems) defect = "output overlaps itself";
        if (!defect && ops[0].ext.elems <= fz::kMaxAllocElems &&
            fz::output_self_overlaps(out, ops[0].ext.elems))
            defect = "output overlaps itself";
    }
    if (!defect && op == kRelu && !std::isfinite(slope)) defect = "slope is not finite";
    if (null_desc) defect = "desc is NULL";
    const bool must_succeed = !defect && !absurd && ops[0].view.nested;

    fz::note("%s dtype %d slope %g%s\n", name, dtype, double(slope), null_desc ? " desc=NULL" : "");
    for (int k = 0; k <= num_inputs; ++k) {
        const oprt_tensor_view_t &v = ops[k].view.v;
        fz::note("  view %d%s: dtype %d ndim %d shape/stride", k, ops[k].view.is_null ? " NULL" : "",
                 fz::raw_dtype(v), int(v.ndim));
        for (int d = 0; d < std::clamp(int(v.ndim), 0, OPRT_MAX_DIMS); ++d)
            fz::note(" %lld/%lld", (long long)v.shape[d], (long long)v.strides[d]);
        fz::note("\n");
    }
    fz::note("  model: %s%s\n", defect ? defect : "valid", must_succeed ? " (must succeed)" : "");

    void *desc = reinterpret_cast<void *>(uintptr_t(1));  // create must overwrite it
    oprt_status_t s;
    const oprt_tensor_view_t *o = ops[0].view.ptr(), *a = ops[1].view.ptr(), *b = ops[2].view.ptr();
    switch (op) {
    case kCopy:
        s = oprt_create_copy_descriptor(null_desc ? nullptr : reinterpret_cast<oprt_copy_descriptor_t *>(&desc), o, a);
        break;
    case kVectorAdd:
        s = oprt_create_vector_add_descriptor(
            null_desc ? nullptr : reinterpret_cast<oprt_vector_add_descriptor_t *>(&desc), o, a, b);
        break;
    case kSilu:
        s = oprt_create_silu_descriptor(null_desc ? nullptr : reinterpret_cast<oprt_silu_descriptor_t *>(&desc), o, a);
        break;
    default:
        s = oprt_create_relu_descriptor(null_desc ? nullptr : reinterpret_cast<oprt_relu_descriptor_t *>(&desc), o,
                                        a, slope);
        break;
    }
    fz::note("  create -> %s %s\n", oprt_status_string(s), oprt_last_error_message());
    if (s != OPRT_SUCCESS) {
        FZ_CHECK(!must_succeed, "create failed on a valid call: %s", oprt_last_error_message());
        fz::check_failure(s, name);
        FZ_CHECK(null_desc || desc == nullptr, "a failed create left *desc = %p", desc);
        return 0;
    }
    FZ_CHECK(!defect, "create accepted a call that must fail (%s)", defect);
    FZ_CHECK(desc != nullptr, "create succeeded with *desc = NULL");

    auto workspace_size = [&](size_t *size) {
        switch (op) {
        case kCopy: return oprt_get_copy_workspace_size(static_cast<oprt_copy_descriptor_t>(desc), size);
        case kVectorAdd:
            return oprt_get_vector_add_workspace_size(static_cast<oprt_vector_add_descriptor_t>(desc), size);
        case kSilu: return oprt_get_silu_workspace_size(static_cast<oprt_silu_descriptor_t>(desc), size);
        default: return oprt_get_relu_workspace_size(static_cast<oprt_relu_descriptor_t>(desc), size);
        }
    };
    if (fdp.ConsumeIntegral<uint8_t>() >= 240) fz::check_failure(workspace_size(nullptr), name);
    size_t required = ~size_t(0);
    FZ_CHECK(workspace_size(&required) == OPRT_SUCCESS, "workspace query failed: %s", oprt_last_error_message());
    FZ_CHECK(required < (size_t(1) << 30), "workspace of %zu bytes", required);

    // Buffers. Every operand sits in its own block sized exactly to it,
    // except inputs placed inside out's block (in place, or shifted).
    const int64_t es = fz::esize(dtype);
    bool executable = true;
    for (int k = 0; k <= num_inputs; ++k) executable = executable && ops[k].ext.elems <= fz::alloc_budget();
    if (!executable) {  // too large to allocate: NULL data for non-empty operands must fail
        bool any = false;
        for (int k = 0; k <= num_inputs; ++k) any = any || ops[k].ext.numel > 0;
        std::vector<uint8_t> ws(required);
        switch (op) {
        case kCopy: s = oprt_execute_copy(static_cast<oprt_copy_descriptor_t>(desc), ws.data(), required, nullptr, nullptr, nullptr); break;
        case kVectorAdd: s = oprt_execute_vector_add(static_cast<oprt_vector_add_descriptor_t>(desc), ws.data(), required, nullptr, nullptr, nullptr, nullptr); break;
        case kSilu: s = oprt_execute_silu(static_cast<oprt_silu_descriptor_t>(desc), ws.data(), required, nullptr, nullptr, nullptr); break;
        default: s = oprt_execute_relu(static_cast<oprt_relu_descriptor_t>(desc), ws.data(), required, nullptr, nullptr, nullptr); break;
        }
        if (any && ops[0].ext.numel > 0) fz::check_failure(s, name);
    } else {
        for (int k = 0; k <= num_inputs; ++k) {
            const uint8_t p = fdp.ConsumeIntegral<uint8_t>();
            Place place = p < 170 ? Place::kOwn : p < 190 ? Place::kOffsetElement : p < 200 ? Place::kMisaligned
                        : p < 208 ? Place::kNull : Place::kOwn;
            if (k > 0 && p >= 208) {
                place = p < 228 ? Place::kAliasOut : p < 245 ? Place::kShiftedOut
                        : (k == 2 ? Place::kAliasIn0 : Place::kOwn);
                if (ops[0].place == Place::kNull || ops[0].place == Place::kMisaligned) place = Place::kOwn;
                // b at a's data: only where a's block covers b's elements.
                if (place == Place::kAliasIn0 && (ops[1].place != Place::kOwn || ops[2].ext.elems > ops[1].ext.elems))
                    place = Place::kOwn;
            }
            ops[k].place = place;
            if (place == Place::kShiftedOut)
                ops[k].shift = fdp.ConsumeIntegralInRange<int64_t>(1, std::max<int64_t>(ops[0].ext.elems, 1));
        }
        // out's block also holds the inputs placed inside it.
        const int64_t out_off = ops[0].place == Place::kOffsetElement ? es : ops[0].place == Place::kMisaligned ? 1 : 0;
        int64_t out_bytes = out_off + ops[0].ext.elems * es;
        for (int k = 1; k <= num_inputs; ++k)
            if (ops[k].place == Place::kAliasOut || ops[k].place == Place::kShiftedOut)
                out_bytes = std::max(out_bytes, out_off + ops[k].shift * es + ops[k].ext.elems * es);
        bool inputs_in_out = false;
        for (int k = 0; k <= num_inputs; ++k) {
            Operand &x = ops[k];
            switch (x.place) {
            case Place::kNull: x.ptr = nullptr; break;
            case Place::kAliasOut: x.ptr = ops[0].ptr; inputs_in_out = true; break;
            case Place::kShiftedOut: x.ptr = ops[0].ptr + x.shift * es; inputs_in_out = true; break;
            case Place::kAliasIn0: x.ptr = ops[1].ptr; break;
            default: {
                const int64_t off = x.place == Place::kOffsetElement ? es : x.place == Place::kMisaligned ? 1 : 0;
                x.block.reset(new Block(size_t(k == 0 ? out_bytes : off + x.ext.elems * es)));
                x.ptr = x.block->base + off;
            }
            }
        }
        // Values: random elements everywhere; out's block poisoned unless inputs live in it.
        fz::Values values{fdp.ConsumeIntegral<uint64_t>(), fdp.ConsumeIntegral<uint8_t>()};
        for (int k = 0; k <= num_inputs; ++k) {
            Block *blk = ops[k].block.get();
            if (!blk) continue;
            for (size_t i = 0; i + size_t(es) <= blk->bytes; i += size_t(es)) {
                if (k == 0 && !inputs_in_out) fz::poison(dtype, blk->base + i);
                else fz::encode(dtype, values.value(), blk->base + i);
            }
            for (size_t i = blk->bytes - blk->bytes % size_t(es); i < blk->bytes; ++i) blk->base[i] = 0xa5;
        }
        std::vector<std::vector<uint8_t>> before(3);
        for (int k = 0; k <= num_inputs; ++k)
            if (ops[k].block) before[k].assign(ops[k].block->base, ops[k].block->base + ops[k].block->bytes);

        // Workspace: the size asked for, or a wrong one; NULL or a real block.
        const uint8_t w = fdp.ConsumeIntegral<uint8_t>();
        size_t ws_size = required;
        if (w >= 200) ws_size = w % 4 == 0 ? 0 : w % 4 == 1 ? required + 64 : required > 0 ? required - 1 : 0;
        const bool ws_null = w % 8 == 7 || (w < 200 && required == 0 && w % 2);
        Block ws{ws_size};
        void *ws_ptr = ws_null ? nullptr : ws.base;

        // The block holding p (out's block for inputs placed inside it), and p's
        // bytes as they were before execute.
        auto owner = [&](const uint8_t *p) -> int {
            for (int k = 0; k <= num_inputs; ++k)
                if (ops[k].block && p >= ops[k].block->base && p <= ops[k].block->base + ops[k].block->bytes) return k;
            return -1;
        };
        auto before_at = [&](const uint8_t *p) {
            const int k = owner(p);
            return before[size_t(k)].data() + (p - ops[k].block->base);
        };

        // The model of execute.
        const char *exec_defect = nullptr;
        bool must_run = true;  // create succeeded: valid pointers must run
        if (ws_size < required) exec_defect = "workspace too small";
        if (required > 0 && ws_null) exec_defect = "workspace NULL";
        if (ops[0].ext.numel > 0) {
            for (int k = 0; k <= num_inputs && !exec_defect; ++k) {
                if (ops[k].ext.numel == 0) continue;
                if (ops[k].ptr == nullptr) exec_defect = "NULL data";
                else if (reinterpret_cast<uintptr_t>(ops[k].ptr) % uintptr_t(es)) exec_defect = "misaligned data";
            }
            // True overlap of out with an input, other than exact in place.
            for (int k = 1; k <= num_inputs && !exec_defect; ++k) {
                if (ops[k].ext.numel == 0 || owner(ops[k].ptr) != 0) continue;
                if (ops[k].ptr == ops[0].ptr && same_layout(ops[k].view.v, out)) continue;
                std::vector<uint8_t> mine(size_t(ops[0].block->bytes / es + 1), 0);
                fz::for_each_element(out, [&](int64_t, int64_t off) { mine[size_t(off)] = 1; });
                bool overlap = false;
                fz::for_each_element(ops[k].view.v, [&](int64_t, int64_t off) {
                    const int64_t at = off + (ops[k].ptr - ops[0].ptr) / es;
                    if (at >= 0 && at < int64_t(mine.size()) && mine[size_t(at)]) overlap = true;
                });
                if (overlap) exec_defect = "out overlaps an input";
            }
        }
        fz::note("  execute: places");
        for (int k = 0; k <= num_inputs; ++k) fz::note(" %d(+%lld)", int(ops[k].place), (long long)ops[k].shift);
        fz::note(" ws %zu/%zu%s model: %s\n", ws_size, required, ws_null ? " NULL" : "",
                 exec_defect ? exec_defect : "valid");

        switch (op) {
        case kCopy:
            s = oprt_execute_copy(static_cast<oprt_copy_descriptor_t>(desc), ws_ptr, ws_size, ops[0].ptr, ops[1].ptr, nullptr);
            break;
        case kVectorAdd:
            s = oprt_execute_vector_add(static_cast<oprt_vector_add_descriptor_t>(desc), ws_ptr, ws_size, ops[0].ptr,
                                        ops[1].ptr, ops[2].ptr, nullptr);
            break;
        case kSilu:
            s = oprt_execute_silu(static_cast<oprt_silu_descriptor_t>(desc), ws_ptr, ws_size, ops[0].ptr, ops[1].ptr,
                                  nullptr);
            break;
        default:
            s = oprt_execute_relu(static_cast<oprt_relu_descriptor_t>(desc), ws_ptr, ws_size, ops[0].ptr, ops[1].ptr,
                                  nullptr);
            break;
        }
        fz::note("  execute -> %s %s\n", oprt_status_string(s), oprt_last_error_message());
        if (s != OPRT_SUCCESS) {
            FZ_CHECK(!(must_run && !exec_defect && ops[0].ext.numel > 0),
                     "execute failed on a valid call: %s", oprt_last_error_message());
            fz::check_failure(s, name);
            if (ops[0].block)
                FZ_CHECK(fz::same_bytes(before[0].data(), ops[0].block->base, before[0].size()),
                         "a failed execute wrote memory");
        } else {
            FZ_CHECK(!exec_defect || ops[0].ext.numel == 0, "execute accepted a call that must fail (%s)", exec_defect);
            if (ops[0].ext.numel > 0) {
                // Expected values from the inputs as they were before the call.
                auto input_at = [&](int k, int64_t off) { return before_at(ops[k].ptr) + off * es; };
                oprt_tensor_view_t walk[3];
                for (int k = 1; k <= num_inputs; ++k) {
                    walk[k] = out;
                    for (int d = 0; d < out.ndim; ++d) walk[k].strides[d] = ops[k].bstrides[d];
                }
                std::vector<int64_t> in_off[3];
                for (int k = 1; k <= num_inputs; ++k) {
                    in_off[k].reserve(size_t(ops[0].ext.numel));
                    fz::for_each_element(walk[k], [&](int64_t, int64_t off) { in_off[k].push_back(off); });
                }
                std::vector<uint8_t> written(size_t(ops[0].block->bytes), 0);
                fz::for_each_element(out, [&](int64_t i, int64_t off) {
                    const uint8_t *got_p = ops[0].ptr + off * es;
                    written[size_t(got_p - ops[0].block->base)] = 1;
                    const uint8_t *x = input_at(1, in_off[1][size_t(i)]);
                    if (op == kCopy) {
                        FZ_CHECK(std::memcmp(got_p, x, size_t(es)) == 0, "copy: element %lld differs", (long long)i);
                        return;
                    }
                    double want;
                    const double xa = fz::decode(dtype, x);
                    if (op == kSilu) {  // f32 math with its own exp: within a few f32 ulps, then one rounding
                        const double got = fz::decode(dtype, got_p);
                        const double exact = std::isnan(xa) ? xa : xa == -HUGE_VAL ? -0.0 : xa / (1.0 + std::exp(-xa));
                        const double rel = dtype == OPRT_DTYPE_F32 ? 1e-6 : dtype == OPRT_DTYPE_F16 ? 1e-3 : 8e-3;
                        // silu.h: far below zero, a tiny negative value or -0 (exp leaves f32's range)
                        const double tiny = dtype == OPRT_DTYPE_F16 ? 6e-8 : 1e-30;
                        const bool ok = std::isnan(exact) ? std::isnan(got)
                                        : std::isinf(exact) ? got == exact
                                                            : std::fabs(got - exact) <= rel * std::fabs(exact) + tiny;
                        FZ_CHECK(ok, "silu: element %lld = %.9g, want %.9g (input %.9g)", (long long)i, got, exact, xa);
                        return;
                    }
                    if (op == kVectorAdd) {
                        want = double(float(xa) + float(fz::decode(dtype, input_at(2, in_off[2][size_t(i)]))));
                    } else if (slope == 0.0f) {
                        want = (xa > 0 || xa != xa) ? xa : 0.0;
                    } else {
                        want = xa > 0 ? xa : double(slope * float(xa));
                    }
                    want = fz::round_to(dtype, f32(want));
                    const double got = fz::decode(dtype, got_p);
                    uint8_t poison[4];
                    fz::poison(dtype, poison);
                    const bool ok = std::isnan(want)
                                        ? std::isnan(got) && std::memcmp(got_p, poison, size_t(es)) != 0
                                        : got == want && std::signbit(got) == std::signbit(want);
                    FZ_CHECK(ok, "%s: element %lld = %.9g, want %.9g (inputs %.9g)", name, (long long)i, got,
                             want, xa);
                });
                // Nothing outside out's elements written; inputs in their own blocks unchanged.
                for (size_t i = 0; i < written.size(); ++i) {
                    if (written[i]) {
                        i += size_t(es) - 1;
                        continue;
                    }
                    FZ_CHECK(ops[0].block->base[i] == before[0][i], "byte %zu of out's block, outside its elements, "
                             "was written", i);
                }
            }
            for (int k = 1; k <= num_inputs; ++k)
                if (ops[k].block)
                    FZ_CHECK(fz::same_bytes(before[k].data(), ops[k].block->base, before[k].size()),
                             "input %d was modified", k);
        }
    }

    if (fdp.ConsumeIntegral<uint8_t>() == 255) {  // NULL descriptors are rejected everywhere
        size_t sz;
        fz::check_failure(oprt_destroy_copy_descriptor(nullptr), "copy");
        fz::check_failure(oprt_get_vector_add_workspace_size(nullptr, &sz), "vector_add");
        fz::check_failure(oprt_execute_relu(nullptr, nullptr, 0, nullptr, nullptr, nullptr), "relu");
        fz::check_failure(oprt_execute_silu(nullptr, nullptr, 0, nullptr, nullptr, nullptr), "silu");
    }
    switch (op) {
    case kCopy: s = oprt_destroy_copy_descriptor(static_cast<oprt_copy_descriptor_t>(desc)); break;
    case kVectorAdd: s = oprt_destroy_vector_add_descriptor(static_cast<oprt_vector_add_descriptor_t>(desc)); break;
    case kSilu: s = oprt_destroy_silu_descriptor(static_cast<oprt_silu_descriptor_t>(desc)); break;
    default: s = oprt_destroy_relu_descriptor(static_cast<oprt_relu_descriptor_t>(desc)); break;
    }
    FZ_CHECK(s == OPRT_SUCCESS, "destroy failed: %s", oprt_last_error_message());
    return 0;
}
