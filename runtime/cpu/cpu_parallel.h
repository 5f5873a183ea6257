// CPU backend helpers: when to fan out over threads (cpu_pool.cc), and vector ISA clones.
#pragma once

#include <algorithm>
#include <cstdint>

// The f32 loops (the compute-heavy ones and the elementwise framework's dense loops)
// are compiled for AVX-512, AVX2 (x86-64-v3: with FMA and F16C) and baseline x86-64
// and the loader picks the best the CPU has (GCC function multi-versioning): one
// portable binary, full-width vectors where they exist. Each
// string is one clone: "avx2,fma" would make two, neither with both.
// OPRT_CPU_X86_MULTIVERSION: g++ on x86-64, where per-ISA versions of a function
// (target attributes, target_clones, __builtin_cpu_supports) are used.
#if defined(__x86_64__) && defined(__GNUC__) && !defined(__clang__) && !defined(__CUDACC__)
#define OPRT_CPU_X86_MULTIVERSION 1
#define OPRT_CPU_CLONES __attribute__((target_clones("avx512f", "arch=x86-64-v3", "default")))
#else
#define OPRT_CPU_X86_MULTIVERSION 0
#define OPRT_CPU_CLONES
#endif

namespace oprt::cpu {

// Below this many elements a parallel region costs more than it saves.
constexpr int64_t kParallelGrain = 1 << 15;

// The threads a parallel_for may use, the caller's included: oprt_set_num_threads,
// else the CPUs this process may run on.
int max_threads();
void set_max_threads(int n);  // 0: the default
bool in_parallel();            // inside a parallel_for (nested ones run serially)
void run_chunks(int64_t chunks, int threads, void (*call)(void *, int64_t), void *ctx);
// Whether a call looks at the machine's load (on by default: with more runnable threads
// than CPUs it runs on the calling thread alone). For the pool's own tests.
void set_load_check(bool on);

// fn(begin, end) over [0, n) in chunks of at least `grain` items, on up to
// max_threads() threads: the caller takes chunks, and so do the pool's workers as
// they get a core (so a call never waits for a thread the OS has not run). Serial
// when n < 2 * grain, with one thread, or inside another parallel_for. The chunk
// boundaries depend on n, grain and max_threads() only, never on timing.
template <typename F>
void parallel_for(int64_t n, int64_t grain, const F &fn) {
    grain = std::max<int64_t>(grain, 1);
    const int threads = max_threads();
    if (n < 2 * grain || threads <= 1 || in_parallel()) {
        if (n > 0) fn(int64_t{0}, n);
        return;
    }
    struct Job {
        const F *fn;
        int64_t n, chunks;
    } job{&fn, n, std::min<int64_t>(n / grain, int64_t{8} * threads)};
    run_chunks(job.chunks, threads, [](void *p, int64_t k) {
        const Job &j = *static_cast<const Job *>(p);
        (*j.fn)(j.n * k / j.chunks, j.n * (k + 1) / j.chunks);
    }, &job);
}

}  // namespace oprt::cpu
