// The blocked CPU matmul shared by the ladder's "packed" step and the production
// kernel: C is cut into MC x NC tiles; for each tile, K is walked in KC slices,
// and each slice of A (MC x KC) and B (KC x NC) is first copied ("packed") into
// contiguous f32 panels in the order the micro-kernel reads them (16-bit inputs
// are widened here, strides are resolved here). The micro-kernel then computes
// an MR x NR block of C from an A panel and a B panel with plain loops the
// compiler turns into broadcast-multiply-adds on vector registers. The tile's
// sums live in an f32 buffer until the last K slice, then are rounded once. While
// the micro-kernels work on a slice, the next slice of B is asked of the caches.
#pragma once

#include <algorithm>
#include <cstdint>
#include <vector>

#include "runtime/cpu/cpu_parallel.h"
#include "runtime/internal/dispatch.h"
#include "runtime/internal/dtype.h"
#include "runtime/internal/plan.h"

namespace oprt::matmul::cpu {

constexpr int64_t kMR = 6;    // rows of C per micro-kernel
constexpr int64_t kNR = 32;   // columns: two AVX-512 vectors (AVX2: two calls of 16, two vectors each)
constexpr int64_t kMC = 96;   // rows of a tile (a multiple of kMR)
constexpr int64_t kNC = 128;  // columns of a tile (a multiple of kNR)
constexpr int64_t kKC = 256;  // K slice: the A panel (kMR x kKC) stays in L1, B's (kKC x kNC) in L2

// c[MR x NR] (row stride ldc) += a_panel (kc x MR) * b_panel (kc x NR), or = when `first`.
// Defined in matmul_cpu.cc, for AVX-512, AVX2 and baseline x86-64 (the widest the CPU has runs).
void micro_kernel(int64_t kc, const float *a, const float *b, float *c, int64_t ldc, bool first);

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

// K slice [p0, p0 + kc) x columns [j0, j0 + nc) of B into panels of kNR columns: panel q
// holds b[p0 + p][j0 + q*NR + j] at q*NR*kc + p*NR + j; columns past nc are zeros.
template <typename T>
void pack_b(const MatmulPlan &g, const T *b, int64_t p0, int64_t kc, int64_t j0, int64_t nc, float *dst) {
    for (int64_t q = 0; q < nc; q += kNR, dst += kNR * kc) {
        const int64_t w = std::min(kNR, nc - q);
        for (int64_t p = 0; p < kc; ++p) {
            const T *src = b + (p0 + p) * g.b_row + (j0 + q) * g.b_col;
            float *row = dst + p * kNR;
            if (g.b_col == 1) {
                for (int64_t j = 0; j < w; ++j) row[j] = to_f32(src[j]);
            } else {
                for (int64_t j = 0; j < w; ++j) row[j] = to_f32(src[j * g.b_col]);
            }
            for (int64_t j = w; j < kNR; ++j) row[j] = 0.0f;
        }
    }
}

// B of at least this many bytes has its next slice prefetched (a smaller one stays in the
// caches between its tiles: the prefetches would only cost issue slots).
constexpr int64_t kPrefetchMinBytes = int64_t(1) << 20;

// The next slice of B (this tile's next K slice, else the next tile's first), asked of the
// caches a few rows before each micro-kernel call of the current slice, so that its packing
// reads the caches: in a row-major B each row of a slice is on its own 4 KiB page, where the
// hardware prefetchers stop. Empty (rows 0) for a small B or one whose rows are strided.
struct NextSliceOfB {
    int64_t p = 0, j = 0, n = 0;               // its first row and column, its columns
    int64_t rows = 0, per_call = 0, done = 0;  // rows to prefetch, a call's share, prefetched
    template <typename T>
    void prefetch_some(const MatmulPlan &g, const T *b) {
        constexpr int64_t kLine = 64 / int64_t(sizeof(T));  // elements of a 64-byte cache line
        for (const int64_t end = std::min(rows, done + per_call); done < end; ++done) {
            const T *row = b + (p + done) * g.b_row + j;
            for (int64_t c = 0; c < n; c += kLine) __builtin_prefetch(row + c);
        }
    }
};
template <typename T>
NextSliceOfB next_slice_of_b(const MatmulPlan &g, int64_t next_p, int64_t j0, int64_t nc, int64_t calls) {
    NextSliceOfB s;
    if (g.b_col != 1 || g.k * g.n * int64_t(sizeof(T)) < kPrefetchMinBytes) return s;
    s.p = next_p, s.j = j0, s.n = nc;
    if (next_p >= g.k) s.p = 0, s.j = j0 + kNC, s.n = std::min(kNC, g.n - s.j);
    if (s.n <= 0) return NextSliceOfB{};
    s.rows = std::min(kKC, g.k - s.p);
    s.per_call = (s.rows + calls - 1) / calls;
    return s;
}

// One tile of C: rows [i0, i0 + mc), columns [j0, j0 + nc), every K slice.
template <typename T>
void gemm_tile(const MatmulPlan &g, const ExecArgs &args, int64_t i0, int64_t j0) {
    thread_local std::vector<float> a_pack, b_pack, c_tile;  // per thread, reused across calls
    a_pack.resize(size_t(kMC * kKC));
    b_pack.resize(size_t(kKC * kNC));
    c_tile.resize(size_t(kMC * kNC));
    const T *a = static_cast<const T *>(args.in0);
    const T *b = static_cast<const T *>(args.in1);
    T *c = static_cast<T *>(args.out);
    const int64_t mc = std::min(kMC, g.m - i0), nc = std::min(kNC, g.n - j0);
    for (int64_t p0 = 0; p0 < g.k; p0 += kKC) {
        const int64_t kc = std::min(kKC, g.k - p0);
        pack_a(g, a, i0, mc, p0, kc, a_pack.data());
        pack_b(g, b, p0, kc, j0, nc, b_pack.data());
        const int64_t calls = ((nc + kNR - 1) / kNR) * ((mc + kMR - 1) / kMR);
        NextSliceOfB next = next_slice_of_b<T>(g, p0 + kc, j0, nc, calls);
        for (int64_t q = 0; q < nc; q += kNR)
            for (int64_t r = 0; r < mc; r += kMR) {
                next.prefetch_some(g, b);
                micro_kernel(kc, a_pack.data() + r * kc, b_pack.data() + q * kc, c_tile.data() + r * kNC + q, kNC,
                             p0 == 0);
            }
    }
    for (int64_t i = 0; i < mc; ++i) {
        T *dst = c + (i0 + i) * g.c_row + j0 * g.c_col;
        const float *src = c_tile.data() + i * kNC;
        for (int64_t j = 0; j < nc; ++j) dst[j * g.c_col] = from_f32<T>(g.k == 0 ? 0.0f : src[j]);
    }
}

// Every tile, on up to the pool's threads when `threaded` (a tile per task).
template <typename T>
void gemm_blocked(const MatmulPlan &g, const ExecArgs &args, bool threaded) {
    const int64_t tiles_m = (g.m + kMC - 1) / kMC, tiles_n = (g.n + kNC - 1) / kNC;
    const auto tiles = [&](int64_t begin, int64_t end) {
        for (int64_t t = begin; t < end; ++t) gemm_tile<T>(g, args, (t / tiles_n) * kMC, (t % tiles_n) * kNC);
    };
    if (threaded)
        oprt::cpu::parallel_for(tiles_m * tiles_n, 1, tiles);
    else
        tiles(0, tiles_m * tiles_n);
}

}  // namespace oprt::matmul::cpu
