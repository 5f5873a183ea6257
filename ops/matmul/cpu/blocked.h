// The blocked CPU matmul shared by the ladder's "packed" step and the production
// kernel: C is cut into MC x NC tiles; each tile walks K in KC slices. B is first
// copied ("packed") into contiguous f32 panels of NR columns in the order the
// micro-kernel reads them (16-bit inputs are widened here, strides are resolved
// here), once for the whole product; A is read where it lies when it is f32 with
// dense rows, else packed a slice at a time. The micro-kernel computes an MR x NR
// block of C from MR rows of A and a B panel with plain loops the compiler turns
// into broadcast-multiply-adds on vector registers. The sums of an f32 C with dense
// rows are kept in C itself; any other C's live in an f32 buffer until the last K
// slice, then are rounded once.
#pragma once

#include <algorithm>
#include <cstdint>
#include <type_traits>
#include <vector>

#include "runtime/cpu/cpu_parallel.h"
#include "runtime/internal/dispatch.h"
#include "runtime/internal/dtype.h"
#include "runtime/internal/plan.h"

namespace oprt::matmul::cpu {

constexpr int64_t kMR = 6;    // rows of C per micro-kernel
constexpr int64_t kNR = 32;   // columns: two AVX-512 vectors (AVX2: two calls of 16, two vectors each)
// Rows of a tile (a multiple of kMR): each B panel brought into L1 serves kMC / kMR
// micro-kernel calls. 192 rather than 96: 1024^3 on two threads of a Xeon with AVX-512 0.84x
// -> 0.91x OpenBLAS, on one 0.91x -> 0.92x (2026-12-06; docs/kernels/matmul.md, "Measured").
constexpr int64_t kMC = 192;
constexpr int64_t kNC = 128;  // columns of a tile (a multiple of kNR)
constexpr int64_t kKC = 256;  // K slice: a B panel (kKC x kNR) stays in L1 while the tile's rows pass

// c[MR x NR] (row stride ldc) += a (MR x kc: element (i, p) at a[i * a_rs + p * a_cs]) * b_panel
// (kc x NR), or = when `first`. A packed panel has a_rs 1, a_cs kMR; A in place a_rs its row
// stride, a_cs 1. Defined in matmul_cpu.cc, for AVX-512, AVX2 and baseline x86-64 (the widest
// the CPU has runs).
void micro_kernel(int64_t kc, const float *a, int64_t a_rs, int64_t a_cs, const float *b, float *c, int64_t ldc,
                  bool first);

// Rows [i0, i0 + mc) x K slice [p0, p0 + kc) of A into panels of kMR rows: panel r holds
// a[i0 + r*MR + i][p0 + p] at r*MR*kc + p*MR + i; rows past mc are zeros. Written in order
// (the kMR rows read side by side): a store every kMR floats apart, row after row, took a
// third of the single-threaded time.
template <typename T>
void pack_a(const MatmulPlan &g, const T *a, int64_t i0, int64_t mc, int64_t p0, int64_t kc, float *dst) {
    for (int64_t r = 0; r < mc; r += kMR) {
        const int64_t rows = std::min(kMR, mc - r);
        const T *src[kMR];
        for (int64_t i = 0; i < kMR; ++i) src[i] = a + (i0 + r + std::min(i, rows - 1)) * g.a_row + p0 * g.a_col;
        for (int64_t p = 0; p < kc; ++p, dst += kMR)
            for (int64_t i = 0; i < kMR; ++i) dst[i] = i < rows ? to_f32(src[i][p * g.a_col]) : 0.0f;
    }
}

// Rows [p_begin, p_end) x columns [j0, j0 + nc) of B into panels of kNR columns, panel_floats
// apart: b[p][j0 + q*NR + j] goes to dst + q*panel_floats + (p - p_begin)*NR + j (so the kc
// rows of a K slice are one contiguous kc x NR block of a panel); columns past nc are zeros.
// Read a row of B at a time, the order a row-major B lies in memory. A tile's rows of B are
// short runs b_row apart, each in its own page where B is wide, and the hardware prefetcher
// does not follow them from page to page: each row's lines are asked for kPrefetchRows rows
// ahead (measured with gemm_blocked's slices, below).
constexpr int64_t kPrefetchRows = 8;

template <typename T>
void pack_b(const MatmulPlan &g, const T *b, int64_t p_begin, int64_t p_end, int64_t j0, int64_t nc, float *dst,
            int64_t panel_floats) {
    for (int64_t p = p_begin; p < p_end; ++p) {
        const T *src = b + p * g.b_row + j0 * g.b_col;
        if (g.b_col == 1 && p + kPrefetchRows < p_end)
            for (int64_t j = 0; j < nc; j += 64 / int64_t(sizeof(T))) __builtin_prefetch(src + kPrefetchRows * g.b_row + j);
        for (int64_t q = 0; q < nc; q += kNR) {
            float *row = dst + q / kNR * panel_floats + (p - p_begin) * kNR;
            const int64_t w = std::min(kNR, nc - q);
            if (g.b_col == 1) {
                for (int64_t j = 0; j < w; ++j) row[j] = to_f32(src[q + j]);
            } else {
                for (int64_t j = 0; j < w; ++j) row[j] = to_f32(src[(q + j) * g.b_col]);
            }
            for (int64_t j = w; j < kNR; ++j) row[j] = 0.0f;
        }
    }
}

// One tile of C: rows [i0, i0 + mc), columns [j0, j0 + nc), every K slice, from B's packed
// panels for these columns (b_panels: the panel of column j0, running the whole of K), or,
// where b_panels is null, from each K slice of them packed here. Each B panel stays in L1
// while the micro-kernel walks down the tile's rows. An f32 A with dense rows is read where
// it lies (only a last panel of fewer than kMR rows is packed, padded with zeros): at 1024^3
// its packing took a tenth of the time (one Xeon core, 2026-12-06). Any other A is packed a
// K slice at a time. Likewise an f32 C with dense rows is summed in place, save its ragged
// edges (fewer than kMR rows or kNR columns), which go through the tile's f32 buffer like
// every 16-bit or strided C.
template <typename T>
void gemm_tile(const MatmulPlan &g, const ExecArgs &args, const float *b_panels, int64_t i0, int64_t j0) {
    thread_local std::vector<float> a_pack, b_pack, c_tile;  // per thread, reused across calls
    a_pack.resize(size_t(kMC * kKC));
    if (!b_panels) b_pack.resize(size_t(kKC * kNC));
    c_tile.resize(size_t(kMC * kNC));
    const T *a = static_cast<const T *>(args.in0);
    T *c = static_cast<T *>(args.out);
    const int64_t mc = std::min(kMC, g.m - i0), nc = std::min(kNC, g.n - j0);
    const int64_t whole_rows = mc / kMR * kMR;  // the rows of whole micro-blocks
    int64_t in_place = 0;                        // rows of the tile whose A is read in place
    int64_t direct_rows = 0, direct_cols = 0;    // the part of the tile summed straight into C
    if constexpr (std::is_same_v<T, float>) {
        if (g.a_col == 1) in_place = whole_rows;
        if (g.c_col == 1 && g.k > 0) direct_rows = whole_rows, direct_cols = nc / kNR * kNR;
    }
    for (int64_t p0 = 0; p0 < g.k; p0 += kKC) {
        const int64_t kc = std::min(kKC, g.k - p0);
        if (in_place < mc) pack_a(g, a, i0 + in_place, mc - in_place, p0, kc, a_pack.data());
        if (!b_panels) pack_b(g, static_cast<const T *>(args.in1), p0, p0 + kc, j0, nc, b_pack.data(), kc * kNR);
        for (int64_t q = 0; q < nc; q += kNR)
            for (int64_t r = 0; r < mc; r += kMR) {
                const float *b_slice = b_panels ? b_panels + q * g.k + p0 * kNR : b_pack.data() + q * kc;
                float *c_block = c_tile.data() + r * kNC + q;
                int64_t ldc = kNC;
                const float *a_block = a_pack.data() + (r - in_place) * kc;
                int64_t a_rs = 1, a_cs = kMR;
                if constexpr (std::is_same_v<T, float>) {
                    if (r < direct_rows && q < direct_cols) c_block = c + (i0 + r) * g.c_row + j0 + q, ldc = g.c_row;
                    if (r < in_place) a_block = a + (i0 + r) * g.a_row + p0, a_rs = g.a_row, a_cs = 1;
                }
                micro_kernel(kc, a_block, a_rs, a_cs, b_slice, c_block, ldc, p0 == 0);
            }
    }
    for (int64_t i = 0; i < mc; ++i) {
        T *dst = c + (i0 + i) * g.c_row + j0 * g.c_col;
        const float *src = c_tile.data() + i * kNC;
        for (int64_t j = i < direct_rows ? direct_cols : 0; j < nc; ++j)
            dst[j * g.c_col] = from_f32<T>(g.k == 0 ? 0.0f : src[j]);
    }
}

// B's packed panels are kept to this many floats (8 MiB): a wider B is done in bands of columns.
constexpr int64_t kBandFloats = int64_t(1) << 21;

// The whole product, on up to the pool's threads when `threaded`. For each band of columns,
// B is packed once (its rows spread over the threads, each row read along its length), then
// the band's C tiles are computed, a tile per task. Where one row of tiles covers M (each
// element of B then serves one tile alone), or one tile's columns of B would be more than
// kBandFloats (K over 16384), each tile packs its K slices of B one at a time instead, just
// before it reads them back (a slice, kKC x kNC, from its own L2). For 64 x 1024 x 1024 f32
// this beat packing B whole first (the panels, 4 MiB, came back from L3) and, with pack_b's
// prefetch, packing a tile's columns of B whole (512 KiB): 115-118 -> 136-139 GFLOP/s on one
// core of a Zen 5 (2026-12-07; docs/kernels/matmul.md). With K over 16384, B is packed again
// for every row of tiles, in bounded memory.
template <typename T>
void gemm_blocked(const MatmulPlan &g, const ExecArgs &args, bool threaded) {
    const auto for_each = [threaded](int64_t n, int64_t grain, const auto &fn) {
        if (threaded)
            oprt::cpu::parallel_for(n, grain, fn);
        else if (n > 0)
            fn(int64_t{0}, n);
    };
    const T *b = static_cast<const T *>(args.in1);
    const int64_t tiles_m = (g.m + kMC - 1) / kMC;
    if (g.k * kNC > kBandFloats || tiles_m == 1) {
        const int64_t tiles_n = (g.n + kNC - 1) / kNC;
        for_each(tiles_m * tiles_n, 1, [&](int64_t begin, int64_t end) {
            for (int64_t t = begin; t < end; ++t)
                gemm_tile<T>(g, args, nullptr, (t / tiles_n) * kMC, (t % tiles_n) * kNC);
        });
        return;
    }
    const int64_t band = kBandFloats / std::max<int64_t>(g.k, 1) / kNC * kNC;  // >= kNC
    thread_local std::vector<float> shared;  // the calling thread's (a lambda naming it would get its own thread's)
    shared.resize(size_t(g.k * std::min(band, (g.n + kNR - 1) / kNR * kNR)));
    float *const panels = shared.data();
    for (int64_t j0 = 0; j0 < g.n; j0 += band) {
        const int64_t nb = std::min(band, g.n - j0), tiles_n = (nb + kNC - 1) / kNC;
        for_each(g.k, 16, [&](int64_t p_begin, int64_t p_end) {
            pack_b(g, b, p_begin, p_end, j0, nb, panels + p_begin * kNR, g.k * kNR);
        });
        for_each(tiles_m * tiles_n, 1, [&](int64_t begin, int64_t end) {
            for (int64_t t = begin; t < end; ++t) {
                const int64_t jj = (t % tiles_n) * kNC;
                gemm_tile<T>(g, args, panels + jj * g.k, (t / tiles_n) * kMC, j0 + jj);
            }
        });
    }
}

}  // namespace oprt::matmul::cpu
