// CPU backend helpers: when to fan out over OpenMP threads, and vector ISA clones.
#pragma once

#include <cstdint>

#if defined(_OPENMP)
#include <omp.h>
#endif

// Compute-heavy f32 loops are compiled for AVX-512, AVX2 and baseline x86-64
// and the loader picks the best the CPU has (GCC function multi-versioning):
// one portable binary, full-width vectors where they exist.
#if defined(__x86_64__) && defined(__GNUC__) && !defined(__clang__) && !defined(__CUDACC__)
#define OPRT_CPU_CLONES __attribute__((target_clones("avx512f", "avx2,fma", "default")))
#else
#define OPRT_CPU_CLONES
#endif

namespace oprt::cpu {

// Below this many elements a parallel region costs more than it saves.
constexpr int64_t kParallelGrain = 1 << 15;

// False in a child process made by fork(): OpenMP's thread pool did not survive
// the fork (libgomp would wait forever for its parent's threads), so every
// kernel there runs on the calling thread alone (runtime/cpu/cpu_fork.cc).
bool threads_usable();

// Whether a loop of n elements fans out over threads.
inline bool fan_out(int64_t n) { return n >= kParallelGrain && threads_usable(); }

inline int max_threads() {
#if defined(_OPENMP)
    if (!threads_usable()) return 1;
    return omp_get_max_threads();
#else
    return 1;
#endif
}

inline int thread_index() {
#if defined(_OPENMP)
    return omp_get_thread_num();
#else
    return 0;
#endif
}

inline int team_size() {
#if defined(_OPENMP)
    return omp_get_num_threads();
#else
    return 1;
#endif
}

}  // namespace oprt::cpu
