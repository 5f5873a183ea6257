// libFuzzer target: reduce_sum and softmax on the CPU backend, through create,
// workspace query, execute and destroy, with fuzzed views (ndim, shapes,
// strides, dtypes), axes (in range, out of range, absurd), output shapes
// (right, kept/removed axis, wrong), NULL, misaligned and overlapping data
// pointers and workspace sizes. Rows reach the kernels' thresholds (16/32
// lanes, 1024/2048/4096 blocks, 2^18 buffered softmax rows) at times.
//
// Findings as in fuzz_elementwise.cc; results are compared with a float64
// reference within a bound that holds for every input (not a statistical one):
// f32 accumulation over the row, one exp and the rounding to the dtype.
#include <memory>

#include "fuzz_support.h"

namespace {

using fz::Block;
using fz::View;

enum Op { kReduceSum, kSoftmax };
const char *const kOpNames[] = {"reduce_sum", "softmax"};
constexpr double kU = 5.9604644775390625e-08;  // 2^-24, f32 unit roundoff

int64_t pick_axis(FuzzedDataProvider &fdp, int ndim) {
    const uint8_t b = fdp.ConsumeIntegral<uint8_t>();
    const int n = std::max(ndim, 1);
    if (b < 235) return fdp.ConsumeIntegralInRange<int64_t>(-n - 1, n);
    static const int64_t bad[] = {std::numeric_limits<int64_t>::min(), std::numeric_limits<int64_t>::max(),
                                  8, -9, int64_t(1) << 32, -(int64_t(1) << 32)};
    return bad[b % 6];
}

// The output: the shape the operator wants (axis removed or kept for
// reduce_sum), a near miss, or anything.
View pick_out(FuzzedDataProvider &fdp, Op op, const View &in, int64_t axis, int dtype, bool *absurd) {
    const uint8_t mode = fdp.ConsumeIntegral<uint8_t>();
    const int n = in.v.ndim;
    if (mode >= 235 || in.is_null || n < 0 || n > OPRT_MAX_DIMS) return fz::pick_view(fdp, dtype, absurd);
    View out;
    fz::set_raw_dtype(out.v, dtype);
    const int nn = std::max(n, 1);
    const int ax = int(((axis % nn) + nn) % nn);
    if (op == kSoftmax || n == 0) {
        out.v.ndim = n;
        for (int d = 0; d < n; ++d) out.v.shape[d] = in.v.shape[d];
        if (op == kReduceSum) out.v.ndim = 0;
    } else if (fdp.ConsumeBool()) {  // axis kept as 1
        out.v.ndim = n;
        for (int d = 0; d < n; ++d) out.v.shape[d] = d == ax ? 1 : in.v.shape[d];
    } else {  // axis removed
        out.v.ndim = n - 1;
        for (int d = 0, j = 0; d < n; ++d)
            if (d != ax) out.v.shape[j++] = in.v.shape[d];
    }
    if (mode >= 205 && out.v.ndim > 0) {  // a near miss
        const int d = fdp.ConsumeIntegralInRange<int>(0, out.v.ndim - 1);
        if (fdp.ConsumeBool())  // one off, without overflowing an absurd INT64_MAX shape
            out.v.shape[d] += out.v.shape[d] == INT64_MAX ? -1 : 1;
        else out.v.ndim -= 1;
    }
    bool nested;
    fz::pick_strides(fdp, out.v, &nested, absurd);
    out.nested = nested;
    return out;
}

// Whether out's shape is right for in and axis, by the header's words; `ambiguous`
// for a 0-d input with a (1,) output, which the header does not settle.
bool shape_ok(Op op, const oprt_tensor_view_t &out, const oprt_tensor_view_t &in, int ax, bool *ambiguous) {
    *ambiguous = false;
    if (op == kSoftmax) {
        if (out.ndim != in.ndim) return false;
        for (int d = 0; d < in.ndim; ++d)
            if (out.shape[d] != in.shape[d]) return false;
        return true;
    }
    if (in.ndim == 0) {
        *ambiguous = out.ndim == 1 && out.shape[0] == 1;
        return out.ndim == 0;
    }
    if (out.ndim == in.ndim) {
        for (int d = 0; d < in.ndim; ++d)
            if (out.shape[d] != (d == ax ? 1 : in.shape[d])) return false;
        return true;
    }
    if (out.ndim != in.ndim - 1) return false;
    for (int d = 0, j = 0; d < in.ndim; ++d)
        if (d != ax && out.shape[j++] != in.shape[d]) return false;
    return true;
}

enum class Place { kOwn, kOffsetElement, kMisaligned, kNull, kInsideOut };

double composite_round(int dtype, double x) { return fz::round_to(dtype, fz::round_to(OPRT_DTYPE_F32, x)); }

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    FuzzedDataProvider fdp(data, size);
    fz::context().clear();
    // Small shapes run thousands of times a second; one input in 64 may reach
    // the long rows and the parallel grain (kParallelGrain, 2^15 elements).
    const bool big = fdp.ConsumeIntegral<uint8_t>() < 4;
    fz::shape_budget() = big ? fz::kMaxNumel : 1 << 11;
    fz::alloc_budget() = big ? fz::kMaxAllocElems : 1 << 14;
    oprt_set_backend(OPRT_BACKEND_CPU);

    const Op op = Op(fdp.ConsumeIntegralInRange<int>(0, 1));
    const char *name = kOpNames[op];
    bool absurd = false;
    const int dtype = fz::pick_dtype(fdp);
    View in = fz::pick_view(fdp, dtype, &absurd);
    in.is_null = fdp.ConsumeIntegral<uint8_t>() == 255;
    const int64_t axis = pick_axis(fdp, in.v.ndim);
    const int out_dtype = fdp.ConsumeIntegral<uint8_t>() < 240 ? dtype : fz::pick_dtype(fdp);
    View out = pick_out(fdp, op, in, axis, out_dtype, &absurd);
    out.is_null = fdp.ConsumeIntegral<uint8_t>() == 255;
    const bool null_desc = fdp.ConsumeIntegral<uint8_t>() == 255;

    // The model of create.
    const char *defect = fz::view_defect(out);
    if (!defect) defect = fz::view_defect(in);
    if (!defect && out_dtype != dtype) defect = "dtype mismatch";
    const int n = std::max(int(in.v.ndim), 1);
    int ax = 0;
    bool ambiguous = false;
    fz::Extent in_ext, out_ext;
    if (!defect) {
        in_ext = fz::extent_of(in.v);
        out_ext = fz::extent_of(out.v);
        if (axis < -n || axis >= n) defect = "axis out of range";
        else ax = int(axis < 0 ? axis + n : axis);
    }
    if (!defect && !shape_ok(op, out.v, in.v, ax, &ambiguous) && !ambiguous) defect = "out shape";
    if (!defect && out_ext.numel > 0) {
        for (int d = 0; d < out.v.ndim; ++d)
            if (out.v.shape[d] > 1 && out.v.strides[d] == 0) defect = "output broadcasts";
        if (!defect && out_ext.numel > out_ext.elems) defect = "output overlaps itself";
        if (!defect && out_ext.elems <= fz::kMaxAllocElems && fz::output_self_overlaps(out.v, out_ext.elems))
            defect = "output overlaps itself";
    }
    if (null_desc) defect = "desc is NULL";
    const bool must_succeed = !defect && !absurd && !ambiguous && out.nested;

    fz::note("%s dtype %d axis %lld%s\n", name, dtype, (long long)axis, null_desc ? " desc=NULL" : "");
    const View *views[2] = {&out, &in};
    for (int k = 0; k < 2; ++k) {
        const oprt_tensor_view_t &v = views[k]->v;
        fz::note("  %s%s: dtype %d ndim %d shape/stride", k ? "in" : "out", views[k]->is_null ? " NULL" : "",
                 fz::raw_dtype(v), int(v.ndim));
        for (int d = 0; d < std::clamp(int(v.ndim), 0, OPRT_MAX_DIMS); ++d)
            fz::note(" %lld/%lld", (long long)v.shape[d], (long long)v.strides[d]);
        fz::note("\n");
    }
    fz::note("  model: %s%s\n", defect ? defect : "valid", must_succeed ? " (must succeed)" : "");

    void *desc = reinterpret_cast<void *>(uintptr_t(1));
    oprt_status_t s =
        op == kReduceSum
            ? oprt_create_reduce_sum_descriptor(
                  null_desc ? nullptr : reinterpret_cast<oprt_reduce_sum_descriptor_t *>(&desc), out.ptr(), in.ptr(), axis)
            : oprt_create_softmax_descriptor(null_desc ? nullptr : reinterpret_cast<oprt_softmax_descriptor_t *>(&desc),
                                             out.ptr(), in.ptr(), axis);
    fz::note("  create -> %s %s\n", oprt_status_string(s), oprt_last_error_message());
    if (s != OPRT_SUCCESS) {
        FZ_CHECK(!must_succeed, "create failed on a valid call: %s", oprt_last_error_message());
        fz::check_failure(s, name);
        FZ_CHECK(null_desc || desc == nullptr, "a failed create left *desc = %p", desc);
        return 0;
    }
    FZ_CHECK(!defect, "create accepted a call that must fail (%s)", defect);
    FZ_CHECK(desc != nullptr, "create succeeded with *desc = NULL");

    auto workspace_size = [&](size_t *sz) {
        return op == kReduceSum ? oprt_get_reduce_sum_workspace_size(static_cast<oprt_reduce_sum_descriptor_t>(desc), sz)
                                : oprt_get_softmax_workspace_size(static_cast<oprt_softmax_descriptor_t>(desc), sz);
    };
    auto execute = [&](void *ws, size_t ws_size, void *o, const void *i) {
        return op == kReduceSum
                   ? oprt_execute_reduce_sum(static_cast<oprt_reduce_sum_descriptor_t>(desc), ws, ws_size, o, i, nullptr)
                   : oprt_execute_softmax(static_cast<oprt_softmax_descriptor_t>(desc), ws, ws_size, o, i, nullptr);
    };
    if (fdp.ConsumeIntegral<uint8_t>() >= 240) fz::check_failure(workspace_size(nullptr), name);
    size_t required = ~size_t(0);
    FZ_CHECK(workspace_size(&required) == OPRT_SUCCESS, "workspace query failed: %s", oprt_last_error_message());
    FZ_CHECK(required < (size_t(1) << 30), "workspace of %zu bytes", required);

    const int64_t es = fz::esize(dtype);
    if (out_ext.elems > fz::alloc_budget() || in_ext.elems > fz::alloc_budget() || in_ext.numel > fz::kMaxNumel) {
        std::vector<uint8_t> ws(required);
        s = execute(ws.data(), required, nullptr, nullptr);
        if (out_ext.numel > 0) fz::check_failure(s, name);
    } else {
        // Placement: own blocks, or the input inside out's block (overlap).
        const uint8_t po = fdp.ConsumeIntegral<uint8_t>(), pi = fdp.ConsumeIntegral<uint8_t>();
        const Place out_place = po < 200 ? Place::kOwn : po < 225 ? Place::kOffsetElement
                              : po < 240 ? Place::kMisaligned : Place::kNull;
        Place in_place = pi < 180 ? Place::kOwn : pi < 205 ? Place::kOffsetElement : pi < 215 ? Place::kMisaligned
                       : pi < 225 ? Place::kNull : Place::kInsideOut;
        if (in_place == Place::kInsideOut && out_place != Place::kOwn && out_place != Place::kOffsetElement)
            in_place = Place::kOwn;
        const int64_t shift = in_place == Place::kInsideOut
                                  ? fdp.ConsumeIntegralInRange<int64_t>(0, std::max<int64_t>(out_ext.elems, 1))
                                  : 0;
        auto offset_of = [&](Place p) { return p == Place::kOffsetElement ? es : p == Place::kMisaligned ? 1 : 0; };
        const int64_t out_off = offset_of(out_place);
        int64_t out_bytes = out_off + out_ext.elems * es;
        if (in_place == Place::kInsideOut) out_bytes = std::max(out_bytes, out_off + (shift + in_ext.elems) * es);
        Block out_block{size_t(out_bytes)};
        Block in_block(in_place == Place::kInsideOut ? 0 : size_t(offset_of(in_place) + in_ext.elems * es));
        uint8_t *out_ptr = out_place == Place::kNull ? nullptr : out_block.base + out_off;
        uint8_t *in_ptr = in_place == Place::kNull          ? nullptr
                          : in_place == Place::kInsideOut ? out_ptr + shift * es
                                                          : in_block.base + offset_of(in_place);

        fz::Values values{fdp.ConsumeIntegral<uint64_t>(), fdp.ConsumeIntegral<uint8_t>()};
        for (size_t i = 0; i + size_t(es) <= in_block.bytes; i += size_t(es)) fz::encode(dtype, values.value(), in_block.base + i);
        for (size_t i = 0; i + size_t(es) <= out_block.bytes; i += size_t(es)) {
            if (in_place == Place::kInsideOut) fz::encode(dtype, values.value(), out_block.base + i);
            else fz::poison(dtype, out_block.base + i);
        }
        for (size_t i = out_block.bytes - out_block.bytes % size_t(es); i < out_block.bytes; ++i) out_block.base[i] = 0xa5;
        const std::vector<uint8_t> out_before(out_block.base, out_block.base + out_block.bytes);
        const std::vector<uint8_t> in_before(in_block.base, in_block.base + in_block.bytes);
        const uint8_t *in_snapshot =
            in_ptr == nullptr ? nullptr
            : in_place == Place::kInsideOut ? out_before.data() + (in_ptr - out_block.base)
                                            : in_before.data() + (in_ptr - in_block.base);

        const uint8_t w = fdp.ConsumeIntegral<uint8_t>();
        size_t ws_size = required;
        if (w >= 200) ws_size = w % 4 == 0 ? 0 : w % 4 == 1 ? required + 64 : required > 0 ? required - 1 : 0;
        const bool ws_null = w % 8 == 7;
        Block ws{ws_size};

        // The model of execute.
        const char *exec_defect = nullptr;
        bool must_run = true;
        if (ws_size < required) exec_defect = "workspace too small";
        if (required > 0 && ws_null) exec_defect = "workspace NULL";
        if (out_ext.numel > 0 && !exec_defect) {
            const uint8_t *ptrs[2] = {out_ptr, in_ptr};
            const int64_t counts[2] = {out_ext.numel, in_ext.numel};
            for (int k = 0; k < 2 && !exec_defect; ++k) {
                if (counts[k] == 0) continue;
                if (ptrs[k] == nullptr) exec_defect = "NULL data";
                else if (reinterpret_cast<uintptr_t>(ptrs[k]) % uintptr_t(es)) exec_defect = "misaligned data";
            }
            if (!exec_defect && in_place == Place::kInsideOut && in_ext.numel > 0) {
                std::vector<uint8_t> mine(size_t(out_bytes / es + 1), 0);
                fz::for_each_element(out.v, [&](int64_t, int64_t off) { mine[size_t(off)] = 1; });
                bool overlap = false;
                fz::for_each_element(in.v, [&](int64_t, int64_t off) {
                    if (mine[size_t(off + shift)]) overlap = true;
                });
                if (overlap) exec_defect = "out overlaps in";
            }
        }
        fz::note("  execute: out place %d, in place %d shift %lld, ws %zu/%zu%s, model: %s\n", int(out_place),
                 int(in_place), (long long)shift, ws_size, required, ws_null ? " NULL" : "",
                 exec_defect ? exec_defect : "valid");

        s = execute(ws_null ? nullptr : ws.base, ws_size, out_ptr, in_ptr);
        fz::note("  execute -> %s %s\n", oprt_status_string(s), oprt_last_error_message());
        if (s != OPRT_SUCCESS) {
            FZ_CHECK(!(must_run && !exec_defect && out_ext.numel > 0), "execute failed on a valid call: %s",
                     oprt_last_error_message());
            fz::check_failure(s, name);
            FZ_CHECK(fz::same_bytes(out_before.data(), out_block.base, out_block.bytes), "a failed execute wrote memory");
        } else if (out_ext.numel > 0) {
            FZ_CHECK(!exec_defect, "execute accepted a call that must fail (%s)", exec_defect);
            // Rows: in's dims other than the axis, walked together with out's.
            oprt_tensor_view_t in_rows{}, out_rows{};
            int64_t L = 1, in_step = 0, out_step = 0;
            if (in.v.ndim > 0) {
                L = in.v.shape[ax];
                in_step = in.v.strides[ax];
                for (int d = 0, j = 0; d < in.v.ndim; ++d) {
                    if (d == ax) continue;
                    in_rows.shape[j] = in.v.shape[d];
                    in_rows.strides[j++] = in.v.strides[d];
                }
                in_rows.ndim = in.v.ndim - 1;
                out_rows.ndim = in_rows.ndim;
                const bool kept = out.v.ndim == in.v.ndim;
                for (int d = 0, j = 0; d < in.v.ndim; ++d) {
                    if (d == ax) {
                        if (kept) out_step = out.v.strides[d];
                        continue;
                    }
                    out_rows.shape[j] = in.v.shape[d];
                    out_rows.strides[j++] = out.v.strides[kept ? d : (d < ax ? d : d - 1)];
                }
                if (op == kReduceSum) out_step = 0;
            }
            if (in_ext.numel == 0) {  // an empty input is never read: its strides may be anything
                in_step = 0;
                for (int d = 0; d < in_rows.ndim; ++d) in_rows.strides[d] = 0;
            }
            std::vector<int64_t> in_base, out_base;
            fz::for_each_element(in_rows, [&](int64_t, int64_t off) { in_base.push_back(off); });
            fz::for_each_element(out_rows, [&](int64_t, int64_t off) { out_base.push_back(off); });
            std::vector<uint8_t> written(out_block.bytes, 0);
            std::vector<double> row(static_cast<size_t>(L));
            uint8_t poison[4];
            fz::poison(dtype, poison);
            for (size_t r = 0; r < in_base.size(); ++r) {
                bool nan = false, pinf = false, ninf = false;
                double m = -HUGE_VAL, sum = 0, abs_sum = 0;
                for (int64_t k = 0; k < L; ++k) {
                    const double x = fz::decode(dtype, in_snapshot + (in_base[r] + k * in_step) * es);
                    row[size_t(k)] = x;
                    nan = nan || std::isnan(x);
                    pinf = pinf || x == HUGE_VAL;
                    ninf = ninf || x == -HUGE_VAL;
                    if (std::isfinite(x)) {
                        sum += x;
                        abs_sum += std::fabs(x);
                    }
                    m = x > m ? x : m;
                }
                auto check = [&](int64_t k, uint8_t *p, double want, double lo, double hi) {
                    written[size_t(p - out_block.base)] = 1;
                    const double got = fz::decode(dtype, p);
                    if (std::isnan(want)) {
                        FZ_CHECK(std::isnan(got) && std::memcmp(p, poison, size_t(es)) != 0,
                                 "%s: row %zu element %lld = %.9g, want NaN", name, r, (long long)k, got);
                    } else {
                        FZ_CHECK(got >= lo && got <= hi, "%s: row %zu element %lld = %.9g, want %.9g in [%.9g, %.9g]",
                                 name, r, (long long)k, got, want, lo, hi);
                    }
                };
                if (op == kReduceSum) {
                    uint8_t *p = out_ptr + out_base[r] * es;
                    if (nan) check(0, p, NAN, 0, 0);
                    else if (abs_sum > 1e37) written[size_t(p - out_block.base)] = 1;  // f32 partial sums may overflow
                    else if (pinf && ninf) check(0, p, NAN, 0, 0);
                    else if (pinf || ninf) {
                        const double inf = pinf ? HUGE_VAL : -HUGE_VAL;
                        check(0, p, inf, inf, inf);
                    } else {
                        const double tol = (double(L) + 2.0) * kU * abs_sum + 1e-45;
                        check(0, p, sum, composite_round(dtype, sum - tol), composite_round(dtype, sum + tol));
                    }
                    continue;
                }
                const bool all_nan = nan || m == HUGE_VAL || m == -HUGE_VAL;
                double total = 0;
                if (!all_nan)
                    for (int64_t k = 0; k < L; ++k) total += std::exp(row[size_t(k)] - m);
                const double base_rtol = kU * (double(L) / 16 + double(L) / 512 + 64);
                for (int64_t k = 0; k < L; ++k) {
                    uint8_t *p = out_ptr + (out_base[r] + k * out_step) * es;
                    if (all_nan) {
                        check(k, p, NAN, 0, 0);
                        continue;
                    }
                    const double y = std::exp(row[size_t(k)] - m) / total;
                    if (row[size_t(k)] == -HUGE_VAL) {  // exp(-inf) is exactly 0
                        check(k, p, 0.0, 0.0, 0.0);
                        continue;
                    }
                    const double rtol = base_rtol + kU * std::fabs(row[size_t(k)] - m);
                    check(k, p, y, composite_round(dtype, y * (1 - rtol) - 1e-36),
                          composite_round(dtype, y * (1 + rtol) + 1e-36));
                }
            }
            for (size_t i = 0; i < written.size(); ++i) {
                if (written[i]) {
                    i += size_t(es) - 1;
                    continue;
                }
                FZ_CHECK(out_block.base[i] == out_before[i], "byte %zu of out's block, outside its elements, was written", i);
            }
            FZ_CHECK(fz::same_bytes(in_before.data(), in_block.base, in_block.bytes), "in was modified");
        }
    }

    s = op == kReduceSum ? oprt_destroy_reduce_sum_descriptor(static_cast<oprt_reduce_sum_descriptor_t>(desc))
                         : oprt_destroy_softmax_descriptor(static_cast<oprt_softmax_descriptor_t>(desc));
    FZ_CHECK(s == OPRT_SUCCESS, "destroy failed: %s", oprt_last_error_message());
    return 0;
}
