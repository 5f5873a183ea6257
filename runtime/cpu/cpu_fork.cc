// Fork safety of the CPU backend (see threads_usable in runtime/cpu/cpu_parallel.h).
//
// libgomp keeps its worker threads between parallel regions; fork() copies
// only the calling thread, and the child's first parallel region waits for
// workers that do not exist. Like PyTorch's at-fork handler, the library marks
// a forked child at the fork itself and its kernels then run serially: a
// parallel region with one thread (if(false) or num_threads(1)) never touches
// the pool. Every child of a fork is marked, whether or not the parent's pool
// had started: which is simpler than tracking it, and always safe.
#include <pthread.h>

#include <atomic>

#include "runtime/cpu/cpu_parallel.h"

namespace oprt::cpu {
namespace {

std::atomic<bool> g_forked_child{false};

void mark_forked_child() { g_forked_child.store(true, std::memory_order_relaxed); }

[[maybe_unused]] const int g_registered = pthread_atfork(nullptr, nullptr, &mark_forked_child);

}  // namespace

bool threads_usable() { return !g_forked_child.load(std::memory_order_relaxed); }

}  // namespace oprt::cpu
