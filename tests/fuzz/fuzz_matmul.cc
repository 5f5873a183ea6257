// libFuzzer target: matmul on the CPU backend, every ladder step, through create,
// variant choice, workspace query, execute and destroy, with fuzzed 2-D views
// (sizes around the micro-kernel and tile edges, row- and column-major, padded,
// broadcast and random strides), views of other ranks, mismatched shapes and
// dtypes, NULL and misaligned data pointers.
//
// Findings: a crash or sanitizer report; a call the model says must fail that
// succeeds, or one that must succeed that fails; a failure without a message
// naming the operator; a failed execute that wrote memory; a successful one whose
// output is off the float64 sum by more than f32 accumulation and the output's
// rounding allow (checked where no value can overflow), that wrote outside the
// output's elements or changed an input.
#include <cmath>

#include "fuzz_support.h"

namespace {

using fz::Block;
using fz::View;

const char *const kVariants[] = {"naive", "ikj", "packed", "auto"};

// A (rows, cols) view, mostly of small sizes; now and then any rank from pick_view.
View pick_matrix(FuzzedDataProvider &fdp, int dtype, int64_t rows, int64_t cols, bool *absurd) {
    if (fdp.ConsumeIntegral<uint8_t>() >= 245) return fz::pick_view(fdp, dtype, absurd);
    View view;
    fz::set_raw_dtype(view.v, dtype);
    view.v.ndim = 2;
    view.v.shape[0] = rows;
    view.v.shape[1] = cols;
    fz::pick_strides(fdp, view.v, &view.nested, absurd);
    return view;
}

int64_t pick_dim(FuzzedDataProvider &fdp, bool *absurd) {
    const uint8_t b = fdp.ConsumeIntegral<uint8_t>();
    if (b < 200) return b % 40;  // 0..39: both sides of 6 x 16 micro-tiles
    static const int64_t edges[] = {95, 96, 97, 127, 128, 129, 255, 256, 257};
    if (b < 250) return edges[b % 9];
    return fz::pick_size(fdp, absurd);
}

double max_finite(int dt) { return dt == OPRT_DTYPE_F16 ? 65504.0 : dt == OPRT_DTYPE_BF16 ? 3.38e38 : 3.40e38; }
double unit_roundoff(int dt) { return dt == OPRT_DTYPE_F16 ? 0x1p-11 : dt == OPRT_DTYPE_BF16 ? 0x1p-8 : 0x1p-24; }
double min_denormal(int dt) { return dt == OPRT_DTYPE_F16 ? 0x1p-24 : dt == OPRT_DTYPE_BF16 ? 0x1p-133 : 0x1p-149; }

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    FuzzedDataProvider fdp(data, size);
    fz::context().clear();
    fz::shape_budget() = 1 << 14;
    oprt_set_backend(OPRT_BACKEND_CPU);
    const char *name = "matmul";

    bool absurd = false;
    const int dtype = fz::pick_dtype(fdp);
    const int64_t pm = pick_dim(fdp, &absurd), pk = pick_dim(fdp, &absurd), pn = pick_dim(fdp, &absurd);
    View a = pick_matrix(fdp, dtype, pm, pk, &absurd);
    // b's rows: mostly K, sometimes another size (refused unless equal).
    const int64_t b_rows = fdp.ConsumeIntegral<uint8_t>() < 240 ? pk : pick_dim(fdp, &absurd);
    View b = pick_matrix(fdp, fdp.ConsumeIntegral<uint8_t>() < 245 ? dtype : fz::pick_dtype(fdp), b_rows, pn, &absurd);
    const int64_t out_n = fdp.ConsumeIntegral<uint8_t>() < 245 ? pn : pick_dim(fdp, &absurd);
    View out = pick_matrix(fdp, fdp.ConsumeIntegral<uint8_t>() < 245 ? dtype : fz::pick_dtype(fdp), pm, out_n, &absurd);
    a.is_null = fdp.ConsumeIntegral<uint8_t>() == 255;
    b.is_null = fdp.ConsumeIntegral<uint8_t>() == 255;
    out.is_null = fdp.ConsumeIntegral<uint8_t>() == 255;
    const char *variant = kVariants[fdp.ConsumeIntegralInRange<int>(0, 3)];

    // The model of create.
    const char *defect = fz::view_defect(out);
    if (!defect) defect = fz::view_defect(a);
    if (!defect) defect = fz::view_defect(b);
    if (!defect && (fz::raw_dtype(a.v) != fz::raw_dtype(out.v) || fz::raw_dtype(b.v) != fz::raw_dtype(out.v)))
        defect = "dtype mismatch";
    if (!defect && (out.v.ndim != 2 || a.v.ndim != 2 || b.v.ndim != 2)) defect = "not 2-D";
    if (!defect && a.v.shape[1] != b.v.shape[0]) defect = "K differs";
    if (!defect && (out.v.shape[0] != a.v.shape[0] || out.v.shape[1] != b.v.shape[1])) defect = "out shape";
    fz::Extent a_ext, b_ext, out_ext;
    if (!defect) {
        a_ext = fz::extent_of(a.v), b_ext = fz::extent_of(b.v), out_ext = fz::extent_of(out.v);
        if (out_ext.numel > 0) {
            for (int d = 0; d < 2; ++d)
                if (out.v.shape[d] > 1 && out.v.strides[d] == 0) defect = "output broadcasts";
            if (!defect && out_ext.numel > out_ext.elems) defect = "output overlaps itself";
            if (!defect && out_ext.elems <= fz::kMaxAllocElems && fz::output_self_overlaps(out.v, out_ext.elems))
                defect = "output overlaps itself";
        }
    }
    const bool must_succeed = !defect && !absurd && out.nested;
    fz::note("matmul dtype %d variant %s\n", dtype, variant);
    const View *views[3] = {&out, &a, &b};
    const char *names[3] = {"out", "a", "b"};
    for (int i = 0; i < 3; ++i) {
        const oprt_tensor_view_t &v = views[i]->v;
        fz::note("  %s%s: dtype %d ndim %d shape/stride", names[i], views[i]->is_null ? " NULL" : "",
                 fz::raw_dtype(v), int(v.ndim));
        for (int d = 0; d < std::clamp(int(v.ndim), 0, OPRT_MAX_DIMS); ++d)
            fz::note(" %lld/%lld", (long long)v.shape[d], (long long)v.strides[d]);
        fz::note("\n");
    }
    fz::note("  model: %s%s\n", defect ? defect : "valid", must_succeed ? " (must succeed)" : "");

    oprt_matmul_descriptor_t desc = nullptr;
    oprt_status_t s = oprt_create_matmul_descriptor(&desc, out.ptr(), a.ptr(), b.ptr());
    fz::note("  create -> %s %s\n", oprt_status_string(s), oprt_last_error_message());
    if (s != OPRT_SUCCESS) {
        FZ_CHECK(!must_succeed, "create failed on a valid call: %s", oprt_last_error_message());
        fz::check_failure(s, name);
        FZ_CHECK(desc == nullptr, "a failed create left *desc = %p", static_cast<void *>(desc));
        return 0;
    }
    FZ_CHECK(!defect, "create accepted a call that must fail (%s)", defect);
    const int64_t m = a.v.shape[0], k = a.v.shape[1], n = b.v.shape[1];  // the views' own (pick_view's too)
    s = oprt_set_matmul_variant(desc, variant);
    FZ_CHECK(s == OPRT_SUCCESS, "variant %s refused: %s", variant, oprt_last_error_message());
    size_t required = ~size_t(0);
    FZ_CHECK(oprt_get_matmul_workspace_size(desc, &required) == OPRT_SUCCESS, "workspace query failed");

    const int64_t es = fz::esize(dtype);
    const int64_t budget = fz::alloc_budget();
    // The reference costs M * N * K: keep it bounded.
    const bool small = a_ext.elems <= budget && b_ext.elems <= budget && out_ext.elems <= budget &&
                       double(m) * double(n) * double(k) <= double(1 << 22);
    if (!small) {
        std::vector<uint8_t> ws(required);
        s = oprt_execute_matmul(desc, ws.data(), required, nullptr, nullptr, nullptr, nullptr);
        if (out_ext.numel > 0) fz::check_failure(s, name);
        FZ_CHECK(oprt_destroy_matmul_descriptor(desc) == OPRT_SUCCESS, "destroy failed");
        return 0;
    }
    // Placement: own blocks; a pointer one byte off (misaligned) or NULL now and then.
    const uint8_t place = fdp.ConsumeIntegral<uint8_t>();
    const int64_t shift = place >= 250 ? 1 : 0;
    Block out_block{size_t(shift + out_ext.elems * es)}, a_block{size_t(a_ext.elems * es)}, b_block{size_t(b_ext.elems * es)};
    uint8_t *out_ptr = place == 249 ? nullptr : out_block.base + shift;
    uint8_t *a_ptr = a_block.base, *b_ptr = b_block.base;
    fz::Values values{fdp.ConsumeIntegral<uint64_t>(), fdp.ConsumeIntegral<uint8_t>()};
    for (Block *blk : {&a_block, &b_block})
        for (size_t i = 0; i + size_t(es) <= blk->bytes; i += size_t(es)) fz::encode(dtype, values.value(), blk->base + i);
    for (size_t i = size_t(shift); i + size_t(es) <= out_block.bytes; i += size_t(es)) fz::poison(dtype, out_block.base + i);
    const std::vector<uint8_t> out_before(out_block.base, out_block.base + out_block.bytes);
    const std::vector<uint8_t> a_before(a_block.base, a_block.base + a_block.bytes);
    const std::vector<uint8_t> b_before(b_block.base, b_block.base + b_block.bytes);

    const char *exec_defect = nullptr;
    if (out_ext.numel > 0) {
        if (out_ptr == nullptr) exec_defect = "NULL data";
        else if (shift) exec_defect = "misaligned data";
    }
    std::vector<uint8_t> ws(required);
    s = oprt_execute_matmul(desc, ws.data(), required, out_ptr, a_ptr, b_ptr, nullptr);
    fz::note("  execute (place %d) -> %s %s; model: %s\n", int(place), oprt_status_string(s),
             oprt_last_error_message(), exec_defect ? exec_defect : "runs");
    FZ_CHECK(fz::same_bytes(a_block.base, a_before.data(), a_block.bytes), "execute changed a");
    FZ_CHECK(fz::same_bytes(b_block.base, b_before.data(), b_block.bytes), "execute changed b");
    if (exec_defect) {
        FZ_CHECK(s != OPRT_SUCCESS, "execute accepted a call that must fail (%s)", exec_defect);
        fz::check_failure(s, name);
        FZ_CHECK(fz::same_bytes(out_block.base, out_before.data(), out_block.bytes), "a failed execute wrote out");
    } else if (s != OPRT_SUCCESS) {
        FZ_CHECK(!out.nested, "execute failed on a valid call: %s", oprt_last_error_message());
        fz::check_failure(s, name);  // an output the overlap search could not decide on
    } else {
        // Every element of out against the float64 sum, and nothing else written.
        std::vector<uint8_t> mine(size_t(out_ext.elems), 0);
        fz::for_each_element(out.v, [&](int64_t, int64_t off) { mine[size_t(off)] = 1; });
        for (int64_t e = 0; e < out_ext.elems; ++e)
            if (!mine[size_t(e)])
                FZ_CHECK(fz::same_bytes(out_ptr + e * es, out_before.data() + shift + e * es, size_t(es)),
                         "wrote element %lld outside out's view", (long long)e);
        const double u = unit_roundoff(dtype);
        // Broadcast views make large products from small buffers: the float64 sums check every
        // `every`-th element of out, at most about 2^20 products in all (the kernel ran them all).
        const int64_t work = m * n * (k > 0 ? k : 1);
        const int64_t every = work > (int64_t(1) << 20) ? work / (int64_t(1) << 20) + 1 : 1;
        for (int64_t e = 0; e < m * n; e += every) {
            const int64_t i = e / n, j = e % n;
            double want = 0.0, scale = 0.0;
            for (int64_t p = 0; p < k; ++p) {
                const double x = fz::decode(dtype, a_ptr + (i * a.v.strides[0] + p * a.v.strides[1]) * es);
                const double y = fz::decode(dtype, b_ptr + (p * b.v.strides[0] + j * b.v.strides[1]) * es);
                want += x * y;
                scale += std::fabs(x * y);
            }
            const double got = fz::decode(dtype, out_ptr + (i * out.v.strides[0] + j * out.v.strides[1]) * es);
            if (!std::isfinite(scale) || scale > max_finite(dtype) / 4) continue;  // may overflow: not modelled
            // Each f32 product and sum also errs by up to half an f32 denormal (absolute).
            const double tol = u * std::fabs(want) + 2.0 * double(k) * 0x1p-24 * scale * (1 + u) +
                               2.0 * double(k + 1) * 0x1p-149 + min_denormal(dtype);
            FZ_CHECK(std::fabs(got - want) <= tol, "out[%lld][%lld] = %.9g, float64 sum %.9g (tolerance %.3g)",
                     (long long)i, (long long)j, got, want, tol);
        }
    }
    FZ_CHECK(oprt_destroy_matmul_descriptor(desc) == OPRT_SUCCESS, "destroy failed: %s", oprt_last_error_message());
    return 0;
}
