// 16-bit <-> f32 arrays (runtime/cpu/cpu_convert.h). f16: F16C where the CPU has
// it (chosen once, at first use), else the portable scalar forms. bf16: plain
// loops in vector ISA clones (baseline x86-64 has no 32 -> 16-bit pack without
// saturation, so its narrowing vectorizes poorly).
#include "runtime/cpu/cpu_convert.h"

#include "runtime/cpu/cpu_parallel.h"

#if defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__)) && !defined(__CUDACC__)
#include <cpuid.h>
#include <immintrin.h>
#define OPRT_HAVE_F16C_PATH 1
#else
#define OPRT_HAVE_F16C_PATH 0
#endif

namespace oprt::cpu {

void widen_f16_portable(const f16_t *in, float *out, int64_t n) {
    for (int64_t i = 0; i < n; ++i) out[i] = f16_to_f32(in[i]);
}

void narrow_f16_portable(const float *in, f16_t *out, int64_t n) {
    for (int64_t i = 0; i < n; ++i) out[i] = f32_to_f16(in[i]);
}

void add_widened_f16_portable(const f16_t *in, float *acc, int64_t n) {
    for (int64_t i = 0; i < n; ++i) acc[i] += f16_to_f32(in[i]);
}

#if OPRT_HAVE_F16C_PATH
// CPUID leaf 1 (clang's __builtin_cpu_supports does not know "f16c"): AVX and
// F16C, and the OS saving the YMM registers (XGETBV), without which AVX faults.
bool has_f16c() {
    static const bool yes = [] {
        unsigned a = 0, b = 0, c = 0, d = 0;
        if (!__get_cpuid(1, &a, &b, &c, &d)) return false;
        if (!(c & bit_OSXSAVE) || !(c & bit_AVX) || !(c & bit_F16C)) return false;
        unsigned lo = 0, hi = 0;
        __asm__ volatile("xgetbv" : "=a"(lo), "=d"(hi) : "c"(0));
        return (lo & 6u) == 6u;  // XMM and YMM state enabled
    }();
    return yes;
}

__attribute__((target("avx,f16c"))) void widen_f16_f16c(const f16_t *in, float *out, int64_t n) {
    int64_t i = 0;
    for (; i + 8 <= n; i += 8) {
        const __m128i h = _mm_loadu_si128(reinterpret_cast<const __m128i *>(in + i));
        _mm256_storeu_ps(out + i, _mm256_cvtph_ps(h));
    }
    for (; i < n; ++i) out[i] = f16_to_f32(in[i]);
}

__attribute__((target("avx,f16c"))) void narrow_f16_f16c(const float *in, f16_t *out, int64_t n) {
    int64_t i = 0;
    for (; i + 8 <= n; i += 8) {
        const __m128i h = _mm256_cvtps_ph(_mm256_loadu_ps(in + i), _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC);
        _mm_storeu_si128(reinterpret_cast<__m128i *>(out + i), h);
    }
    for (; i < n; ++i) out[i] = f32_to_f16(in[i]);
}
// One pass instead of widening into a buffer and then adding: the first-axis
// sums add every row of a block into its running sums.
__attribute__((target("avx,f16c"))) void add_widened_f16_f16c(const f16_t *in, float *acc, int64_t n) {
    int64_t i = 0;
    for (; i + 8 <= n; i += 8) {
        const __m256 x = _mm256_cvtph_ps(_mm_loadu_si128(reinterpret_cast<const __m128i *>(in + i)));
        _mm256_storeu_ps(acc + i, _mm256_add_ps(_mm256_loadu_ps(acc + i), x));
    }
    for (; i < n; ++i) acc[i] += f16_to_f32(in[i]);
}
#else
bool has_f16c() { return false; }
void widen_f16_f16c(const f16_t *in, float *out, int64_t n) { widen_f16_portable(in, out, n); }
void narrow_f16_f16c(const float *in, f16_t *out, int64_t n) { narrow_f16_portable(in, out, n); }
void add_widened_f16_f16c(const f16_t *in, float *acc, int64_t n) { add_widened_f16_portable(in, acc, n); }
#endif

OPRT_CPU_CLONES void widen(const bf16_t *in, float *out, int64_t n) {
    for (int64_t i = 0; i < n; ++i) out[i] = bf16_to_f32(in[i]);
}

OPRT_CPU_CLONES void narrow(const float *in, bf16_t *out, int64_t n) {
    for (int64_t i = 0; i < n; ++i) out[i] = f32_to_bf16(in[i]);
}

void widen(const f16_t *in, float *out, int64_t n) {
    if (has_f16c()) widen_f16_f16c(in, out, n);
    else widen_f16_portable(in, out, n);
}

void narrow(const float *in, f16_t *out, int64_t n) {
    if (has_f16c()) narrow_f16_f16c(in, out, n);
    else narrow_f16_portable(in, out, n);
}

void add_widened(const f16_t *in, float *acc, int64_t n) {
    if (has_f16c()) add_widened_f16_f16c(in, acc, n);
    else add_widened_f16_portable(in, acc, n);
}

}  // namespace oprt::cpu
