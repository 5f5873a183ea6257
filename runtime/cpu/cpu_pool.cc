// The CPU backend's thread pool (cpu_parallel.h: parallel_for, max_threads).
//
// Why not OpenMP: a parallel region ends at a barrier that waits for every thread of
// the team, so one descheduled thread stalls the whole call when other processes keep
// the cores busy, and idle OpenMP threads spin (the wait policy is read from the
// environment once, when libgomp loads). Measured on 2 cores with 2 busy processes:
// a 1M-element vector_add took 15 ms with OpenMP against 0.7 ms on one thread.
//
// Here the calling thread works too and takes chunks from a shared counter; woken
// workers (condition variable: they sleep, never spin) take chunks as they get a core.
// The caller waits only for the chunks a worker has started, never for a worker that
// has not run yet: with no free core the call runs at one-thread speed.
#include <pthread.h>
#include <sched.h>

#include <algorithm>
#include <atomic>
#include <condition_variable>
#include <mutex>
#include <thread>

#include "runtime/cpu/cpu_parallel.h"

namespace oprt::cpu {
namespace {

thread_local bool t_in_parallel = false;  // nested calls (and the workers) run serially

int default_threads() {
#if defined(__linux__)
    cpu_set_t set;
    if (sched_getaffinity(0, sizeof(set), &set) == 0) return std::max(1, CPU_COUNT(&set));
#endif
    return std::max(1u, std::thread::hardware_concurrency());
}

std::atomic<int> g_requested{0};  // oprt_set_num_threads; 0: default_threads()

class Pool {
  public:
    // Runs call(ctx, k) for k in [0, chunks) on the caller and up to `helpers` workers.
    void run(int64_t chunks, int helpers, void (*call)(void *, int64_t), void *ctx) {
        std::unique_lock<std::mutex> busy(busy_, std::try_to_lock);
        if (!busy.owns_lock()) {  // another thread's job has the workers: run here, serially
            for (int64_t k = 0; k < chunks; ++k) call(ctx, k);
            return;
        }
        {
            std::lock_guard<std::mutex> lock(m_);
            while (started_ < helpers) {  // workers are made on first need, kept after
                std::thread(&Pool::worker, this, started_).detach();
                ++started_;
                ++alive_;
            }
            call_ = call;
            ctx_ = ctx;
            chunks_ = chunks;
            helpers_ = helpers;
            next_.store(0, std::memory_order_relaxed);
            remaining_.store(chunks, std::memory_order_relaxed);
            open_ = true;
            ++generation_;
        }
        wake_.notify_all();
        work();
        std::unique_lock<std::mutex> lock(m_);
        done_.wait(lock, [&] { return remaining_.load(std::memory_order_acquire) == 0; });
        open_ = false;  // a worker that wakes from now on skips this job
        done_.wait(lock, [&] { return active_ == 0; });
    }

    // Stops the workers and waits for them to exit (at library unload).
    void shutdown() {
        std::unique_lock<std::mutex> lock(m_);
        stop_ = true;
        wake_.notify_all();
        done_.wait(lock, [&] { return alive_ == 0; });
    }

  private:
    void work() {
        const int64_t chunks = chunks_;
        for (int64_t k; (k = next_.fetch_add(1, std::memory_order_relaxed)) < chunks;) {
            call_(ctx_, k);
            if (remaining_.fetch_sub(1, std::memory_order_acq_rel) == 1) {
                std::lock_guard<std::mutex> lock(m_);
                done_.notify_all();
            }
        }
    }

    void worker(int id) {
        t_in_parallel = true;
        std::unique_lock<std::mutex> lock(m_);
        uint64_t seen = generation_;
        for (;;) {
            wake_.wait(lock, [&] { return stop_ || generation_ != seen; });
            if (stop_) break;
            seen = generation_;
            if (!open_ || id >= helpers_) continue;
            ++active_;
            lock.unlock();
            work();
            lock.lock();
            if (--active_ == 0) done_.notify_all();
        }
        if (--alive_ == 0) done_.notify_all();
    }

    std::mutex busy_;  // held by the thread whose job the pool runs
    std::mutex m_;
    std::condition_variable wake_, done_;
    // The job (written under m_ while no worker is in one).
    void (*call_)(void *, int64_t) = nullptr;
    void *ctx_ = nullptr;
    int64_t chunks_ = 0;
    int helpers_ = 0;
    std::atomic<int64_t> next_{0}, remaining_{0};
    bool open_ = false;
    uint64_t generation_ = 0;
    int active_ = 0;  // workers inside the job
    int started_ = 0, alive_ = 0;
    bool stop_ = false;
};

Pool *g_pool = new Pool;  // replaced (the old one leaked) in a forked child

// A forked child has none of the parent's workers, and the pool's locks may have been
// held by a thread that does not exist there: it starts over with a new pool.
void after_fork_in_child() { g_pool = new Pool; }

struct Lifetime {
    Lifetime() { pthread_atfork(nullptr, nullptr, after_fork_in_child); }
    ~Lifetime() { g_pool->shutdown(); }  // workers run this library's code: end them first
} g_lifetime;

}  // namespace

int max_threads() {
    const int n = g_requested.load(std::memory_order_relaxed);
    return n > 0 ? n : default_threads();
}

void set_max_threads(int n) { g_requested.store(n, std::memory_order_relaxed); }

bool in_parallel() { return t_in_parallel; }

void run_chunks(int64_t chunks, int threads, void (*call)(void *, int64_t), void *ctx) {
    t_in_parallel = true;
    g_pool->run(chunks, threads - 1, call, ctx);
    t_in_parallel = false;
}

}  // namespace oprt::cpu
