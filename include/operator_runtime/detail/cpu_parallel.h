// CPU backend helpers: when to fan out over OpenMP threads.
#pragma once

#include <cstdint>

#if defined(_OPENMP)
#include <omp.h>
#endif

namespace oprt::cpu {

// Below this many elements a parallel region costs more than it saves.
constexpr int64_t kParallelGrain = 1 << 15;

inline int max_threads() {
#if defined(_OPENMP)
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
