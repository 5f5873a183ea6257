// copy on the CPU, dense: per-thread slices by memcpy, by 64-byte moves where
// memcpy is slow (memcpy_slow), or past a last-level cache by streaming stores
// (kStreamBytes); other layouts: the strided elementwise walk. Elements are
// moved as raw bits (NaN payloads survive).
#include <algorithm>
#include <cstdint>
#include <cstring>
#if defined(__SSE2__)
#include <emmintrin.h>
#endif

#include "runtime/cpu/cpu_elementwise.h"
#include "runtime/internal/dtype.h"
#include "ops/copy/copy_backends.h"

namespace oprt::copy::cpu {
namespace {

// memcpy moves a byte for less than any other loop here, so a second thread is
// worth its start from twice the elementwise grain (f32, 2-core development
// machine, 2026-12-05: 2^16 elements in cache 2.76 us on two threads against 2.14
// on one (numpy 2.15-2.4), from memory 7.0 against 10.0 (numpy 10.3-10.7); 2^17 in
// cache 4.2 against 6.3).
constexpr int64_t kCopyGrain = 2 * oprt::cpu::kParallelGrain;

// glibc's memcpy slows down 10-15x where the destination sits 1-31 bytes past
// the source within a 4 KiB page, as `out = np.empty_like(x)` made right after
// x puts it (16 bytes past): glibc 2.36 on the 2-core AMD EPYC development
// machine, 2026-12-07, 256 KB took 88 us there against 6-8 us at 0 or 32-4080
// bytes past (its short-rep-move path, up to about 1 MB). copy_by_lines takes
// 6.3-6.9 us at any offset; it moves a cache line a step, so the window is a
// line wide.
bool memcpy_slow(const void *dst, const void *src) {
    constexpr uintptr_t kPage = 4096, kNearBytes = 64;
    const uintptr_t past = (reinterpret_cast<uintptr_t>(dst) - reinterpret_cast<uintptr_t>(src)) % kPage;
    return past != 0 && past < kNearBytes;
}

// Copies past a last-level cache (32 MB here) write around the caches:
// streaming stores fill whole lines without first reading them as plain
// stores do, and a copy that large would not stay in the cache anyway. Two
// threads, development machine, 2026-12-07: 64 MB 28.6 GB/s with memcpy ->
// 35.1 streamed, 256 MB 30.0 -> 39.9 (numpy's one memcpy call: 20 and 30);
// 16 MB, in the cache, 54.9 -> 43.3, so smaller copies keep memcpy.
constexpr int64_t kStreamBytes = int64_t(32) << 20;

// `bytes` from src to dst through 16-byte streaming stores (SSE2; elsewhere memcpy).
void stream_copy(void *dst, const void *src, size_t bytes) {
#if defined(__SSE2__)
    auto *d = static_cast<char *>(dst);
    const auto *s = static_cast<const char *>(src);
    size_t i = std::min(bytes, size_t(-reinterpret_cast<uintptr_t>(d) % 16));  // up to d's first 16-byte boundary
    std::memcpy(d, s, i);
    for (; i + 16 <= bytes; i += 16)
        _mm_stream_si128(reinterpret_cast<__m128i *>(d + i), _mm_loadu_si128(reinterpret_cast<const __m128i *>(s + i)));
    std::memcpy(d + i, s + i, bytes - i);
    _mm_sfence();  // the streamed lines are visible before the call returns
#else
    std::memcpy(dst, src, bytes);
#endif
}

// `bytes` from src to dst, 64 bytes a step (one or two vector moves at the widest ISA).
OPRT_CPU_CLONES void copy_by_lines(void *dst, const void *src, size_t bytes) {
    auto *d = static_cast<char *>(dst);
    const auto *s = static_cast<const char *>(src);
    size_t i = 0;
    for (; i + 64 <= bytes; i += 64) std::memcpy(d + i, s + i, 64);
    for (; i < bytes; ++i) d[i] = s[i];
}

template <typename T>
void copy_typed(const ElementwisePlan &p, T *dst, const T *src) {
    if (p.contiguous) {
        if (dst == src) return;
        const int64_t n = p.numel;
        const bool stream = n * int64_t(sizeof(T)) >= kStreamBytes, loop = memcpy_slow(dst, src);
        oprt::cpu::parallel_for(n, kCopyGrain, [&](int64_t begin, int64_t end) {
            const size_t bytes = size_t(end - begin) * sizeof(T);
            if (stream)
                stream_copy(dst + begin, src + begin, bytes);
            else if (loop)
                copy_by_lines(dst + begin, src + begin, bytes);
            else
                std::memcpy(dst + begin, src + begin, bytes);
        });
        return;
    }
    oprt::cpu::elementwise(p, dst, src, static_cast<const T *>(nullptr), [](T *o, const T *a, const T *) { *o = *a; });
}

}  // namespace

oprt_status_t plan(ElementwisePlan &plan) {
    plan.kernel_name = plan.contiguous ? "cpu.memcpy" : "cpu.strided";
    return OPRT_SUCCESS;
}

oprt_status_t run(const ElementwisePlan &plan, const ExecArgs &args) {
    // Raw bits: any 2-byte type moves the same way.
    if (plan.dtype == OPRT_DTYPE_F32)
        copy_typed(plan, static_cast<float *>(args.out), static_cast<const float *>(args.in0));
    else
        copy_typed(plan, static_cast<uint16_t *>(args.out), static_cast<const uint16_t *>(args.in0));
    return OPRT_SUCCESS;
}

}  // namespace oprt::copy::cpu
