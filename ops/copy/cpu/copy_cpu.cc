// copy on the CPU: memcpy in per-thread slices when dense (a plain loop where
// memcpy is slow: memcpy_slow), else the strided elementwise walk. Elements
// are moved as raw bits (NaN payloads survive).
#include <cstdint>
#include <cstring>

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

// glibc's memcpy slows down 10-15x where the destination sits a little past
// the source within a 4 KiB page, as `out = np.empty_like(x)` made right after
// x puts it (16 bytes past). glibc 2.36 on the 2-core AMD EPYC development
// machine, 2026-12-07: 256 KB took 88 us at 16 bytes past against 6-8 us at 0
// or 32-4080 (its short-rep-move path: slow at 1-31 bytes past), 256 MB 8-14
// GB/s at 16-512 bytes past against 32-36 GB/s at 0 or 1024-4080 (its
// non-temporal path). A plain loop of vector moves runs at 21-56 GB/s by size
// whatever the offset (256 KB at 16 bytes past: 7.8 us); the build keeps the
// compiler from turning it back into a memcpy call (CMakeLists.txt).
bool memcpy_slow(const void *dst, const void *src) {
    constexpr uintptr_t kPage = 4096, kNearBytes = 1024;
    const uintptr_t past = (reinterpret_cast<uintptr_t>(dst) - reinterpret_cast<uintptr_t>(src)) % kPage;
    return past != 0 && past < kNearBytes;
}

template <typename T>
void copy_typed(const ElementwisePlan &p, T *dst, const T *src) {
    if (p.contiguous) {
        if (dst == src) return;
        const int64_t n = p.numel;
        const bool loop = memcpy_slow(dst, src);
        oprt::cpu::parallel_for(n, kCopyGrain, [&](int64_t begin, int64_t end) {
            if (loop)
                for (int64_t i = begin; i < end; ++i) dst[i] = src[i];
            else
                std::memcpy(dst + begin, src + begin, size_t(end - begin) * sizeof(T));
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
