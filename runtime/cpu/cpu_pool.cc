// The CPU backend's thread pool (cpu_parallel.h: parallel_for, max_threads).
//
// Why not OpenMP: a parallel region ends at a barrier that waits for every thread of
// the team, so one descheduled thread stalls the whole call when other processes keep
// the cores busy, and idle OpenMP threads spin (the wait policy is read from the
// environment once, when libgomp loads). On 2 cores with 2 busy processes a 1M-element
// relu took about 80 times as long with OpenMP as on one thread (docs/performance.md,
// "CPU: busy cores").
//
// Here the calling thread works too and takes chunks from a shared counter; woken
// workers take chunks as they get a core. After a job a worker looks for the next one
// for 30 us, then sleeps on a condition variable (an idle pool never spins).
// The caller waits only for the chunks a worker has claimed, never for a worker that
// has not run yet, nor for the pool's lock (held by a worker the OS has preempted, it
// runs the call serially instead): with no free core the call runs at one-thread speed.
#include <fcntl.h>
#include <pthread.h>
#include <sched.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdlib>
#include <cstring>
#include <mutex>
#include <thread>

#include "runtime/cpu/cpu_parallel.h"

namespace oprt::cpu {
namespace {

thread_local bool t_in_parallel = false;  // nested calls (and the workers) run serially

// The CPUs this process may run on, asked once.
int default_threads() {
    static const int n = [] {
#if defined(__linux__)
        cpu_set_t set;
        if (sched_getaffinity(0, sizeof(set), &set) == 0) return std::max(1, CPU_COUNT(&set));
#endif
        return int(std::max(1u, std::thread::hardware_concurrency()));
    }();
    return n;
}

std::atomic<int> g_requested{0};  // oprt_set_num_threads; 0: default_threads()

// Whether more threads are runnable on the machine now than it has CPUs: the kernel's
// count in the fourth field of /proc/loadavg ("2/345": runnable/all, this thread
// included), read at most every 10 ms. Then a helper would mostly wait for a core, and a
// worker preempted inside its chunk would hold the call up until it runs again, so a
// call runs on the calling thread alone.
std::atomic<bool> g_load_check{true};

bool machine_busy() {
    if (!g_load_check.load(std::memory_order_relaxed)) return false;
#if defined(__linux__)
    static std::atomic<int64_t> next_read{0};
    static std::atomic<bool> busy{false};
    static const long cpus = std::max(1L, sysconf(_SC_NPROCESSORS_ONLN));
    const int64_t now = std::chrono::duration_cast<std::chrono::nanoseconds>(
                            std::chrono::steady_clock::now().time_since_epoch())
                            .count();
    int64_t due = next_read.load(std::memory_order_relaxed);
    if (now >= due && next_read.compare_exchange_strong(due, now + 10'000'000)) {
        char text[128] = {};
        const int fd = open("/proc/loadavg", O_RDONLY | O_CLOEXEC);
        if (fd >= 0) {
            const ssize_t n = read(fd, text, sizeof text - 1);
            close(fd);
            const char *slash = n > 0 ? std::strchr(text, '/') : nullptr;
            const char *start = slash;
            while (start && start > text && start[-1] >= '0' && start[-1] <= '9') --start;
            if (slash && start < slash) busy.store(std::atol(start) > cpus, std::memory_order_relaxed);
        }
    }
    return busy.load(std::memory_order_relaxed);
#else
    return false;
#endif
}

class Pool {
  public:
    // Runs call(ctx, k) for k in [0, chunks) on the caller and up to `helpers` workers.
    void run(int64_t chunks, int helpers, void (*call)(void *, int64_t), void *ctx) {
        std::unique_lock<std::mutex> busy(busy_, std::try_to_lock);
        std::unique_lock<std::mutex> lock(m_, std::defer_lock);
        // Another thread's job has the workers, or a worker that holds the lock is not
        // running now: run here, serially, rather than wait.
        if (!busy.owns_lock() || !lock.try_lock()) {
            for (int64_t k = 0; k < chunks; ++k) call(ctx, k);
            return;
        }
        while (started_ < helpers) {  // workers are made on first need, kept after
            std::thread(&Pool::worker, this, started_).detach();
            ++started_;
            ++alive_;
        }
        const uint32_t generation = ++generation_;
        job_ = Job{call, ctx, chunks, helpers};
        remaining_.store(chunks, std::memory_order_relaxed);
        ticket_.store(uint64_t{generation} << 32, std::memory_order_release);
        const bool sleeping = sleepers_ > 0;
        lock.unlock();
        if (sleeping) wake_.notify_all();  // the others are still looking for a job
        work(generation, job_);
        // Wait only for the chunks a worker has claimed (none, when no worker ran).
        for (int spin = 0; remaining_.load(std::memory_order_acquire) != 0 && spin < 64; ++spin)
            std::this_thread::yield();
        if (remaining_.load(std::memory_order_acquire) != 0) {
            lock.lock();
            done_.wait(lock, [&] { return remaining_.load(std::memory_order_acquire) == 0; });
        }
    }

    // Stops the workers and waits for them to exit (at library unload).
    void shutdown() {
        std::unique_lock<std::mutex> lock(m_);
        stop_ = true;
        wake_.notify_all();
        done_.wait(lock, [&] { return alive_ == 0; });
    }

  private:
    struct Job {
        void (*call)(void *, int64_t) = nullptr;
        void *ctx = nullptr;
        int64_t chunks = 0;
        int helpers = 0;
    };

    // Claims and runs chunks of job `generation` until none is left. A claim is a
    // compare-and-swap of (generation, next chunk), so a worker holding an older job's
    // copy can never claim a chunk of a newer one, nor touch an older one's ctx once
    // its chunks are all claimed: the caller returns when the claimed ones are done.
    void work(uint32_t generation, const Job &job) {
        uint64_t t = ticket_.load(std::memory_order_acquire);
        for (;;) {
            const int64_t k = int64_t(t & 0xffffffffu);
            if ((t >> 32) != generation || k >= job.chunks) return;
            if (!ticket_.compare_exchange_weak(t, t + 1, std::memory_order_acq_rel)) continue;
            job.call(job.ctx, k);
            if (remaining_.fetch_sub(1, std::memory_order_acq_rel) == 1) {
                std::lock_guard<std::mutex> lock(m_);
                done_.notify_all();
            }
            t = ticket_.load(std::memory_order_acquire);
        }
    }

    // Whether a job newer than `seen` was published within kLookSpan (checked without the
    // lock): a worker keeps looking that long after each job before it sleeps, so calls in
    // quick succession do not pay a wake-up each (a futex and an inter-processor interrupt,
    // several microseconds, more in a virtual machine), and an idle pool costs nothing.
    bool look_for_job(uint32_t seen) const {
        const auto until = std::chrono::steady_clock::now() + kLookSpan;
        do {
            for (int i = 0; i < 64; ++i) {
                if (uint32_t(ticket_.load(std::memory_order_acquire) >> 32) != seen) return true;
#if defined(__x86_64__) || defined(__i386__)
                __builtin_ia32_pause();
#endif
            }
        } while (std::chrono::steady_clock::now() < until);
        return false;
    }

    void worker(int id) {
        t_in_parallel = true;
        std::unique_lock<std::mutex> lock(m_);
        uint32_t seen = generation_;
        for (;;) {
            if (generation_ == seen && !stop_) {
                lock.unlock();
                look_for_job(seen);
                lock.lock();
                ++sleepers_;
                wake_.wait(lock, [&] { return stop_ || generation_ != seen; });
                --sleepers_;
            }
            if (stop_) break;
            seen = generation_;
            const Job job = job_;
            if (id >= job.helpers) continue;
            lock.unlock();
            work(seen, job);
            lock.lock();
        }
        if (--alive_ == 0) done_.notify_all();
    }

    std::mutex busy_;  // held by the thread whose job the pool runs
    std::mutex m_;     // guards the job's description, generation_ and the workers' state
    std::condition_variable wake_, done_;
    Job job_;
    uint32_t generation_ = 0;  // wraps: only equality matters
    std::atomic<uint64_t> ticket_{0};  // (generation << 32) | the next unclaimed chunk
    std::atomic<int64_t> remaining_{0};  // chunks of the current job not finished yet
    int started_ = 0, alive_ = 0;
    int sleepers_ = 0;  // workers waiting on wake_
    bool stop_ = false;
    static constexpr std::chrono::microseconds kLookSpan{30};
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

void set_load_check(bool on) { g_load_check.store(on, std::memory_order_relaxed); }

void run_chunks(int64_t chunks, int threads, void (*call)(void *, int64_t), void *ctx) {
    if (machine_busy()) {
        for (int64_t k = 0; k < chunks; ++k) call(ctx, k);
        return;
    }
    t_in_parallel = true;
    g_pool->run(chunks, threads - 1, call, ctx);
    t_in_parallel = false;
}

}  // namespace oprt::cpu
