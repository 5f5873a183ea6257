// oprt_set_num_threads / oprt_get_num_threads and the CPU thread pool: the count is
// process-wide, every op gives the same results on 1, 2, 3 and 7 threads (elementwise
// ops and softmax bit for bit; reduce_sum within rounding), concurrent callers share
// the pool, and a forked child computes with a pool of its own.
#include <gtest/gtest.h>
#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <cmath>
#include <thread>
#include <vector>

#include "operator_runtime/operator_runtime.h"
#include "runtime/cpu/cpu_parallel.h"
#include "test_support.h"

namespace {

using oprt_test::make_view;

// Restores the default thread count and this thread's backend (run_all picks the CPU: in an
// NVIDIA build "auto" would choose the GPU, which cannot read these host vectors).
class ThreadsGuard {
public:
    ThreadsGuard() {
        EXPECT_EQ(oprt_get_num_threads(&saved_), OPRT_SUCCESS);
        EXPECT_EQ(oprt_get_backend(&backend_), OPRT_SUCCESS);
    }
    ~ThreadsGuard() {
        oprt_set_num_threads(0);
        oprt_set_backend(backend_);
    }

private:
    int saved_ = 0;
    oprt_backend_t backend_ = OPRT_BACKEND_AUTO;
};

TEST(Threads, SetAndGet) {
    ThreadsGuard guard;
    int n = 0;
    ASSERT_EQ(oprt_get_num_threads(&n), OPRT_SUCCESS);
    EXPECT_GE(n, 1);
    const int by_default = n;
    ASSERT_EQ(oprt_set_num_threads(3), OPRT_SUCCESS);
    std::thread([] {  // process-wide: another thread sees it
        int m = 0;
        EXPECT_EQ(oprt_get_num_threads(&m), OPRT_SUCCESS);
        EXPECT_EQ(m, 3);
    }).join();
    ASSERT_EQ(oprt_set_num_threads(0), OPRT_SUCCESS);
    ASSERT_EQ(oprt_get_num_threads(&n), OPRT_SUCCESS);
    EXPECT_EQ(n, by_default);
    EXPECT_EQ(oprt_set_num_threads(-1), OPRT_ERR_INVALID_ARG);
    EXPECT_NE(std::string(oprt_last_error_message()).find("n = -1"), std::string::npos);
    EXPECT_EQ(oprt_set_num_threads(OPRT_MAX_THREADS + 1), OPRT_ERR_INVALID_ARG);
    EXPECT_EQ(oprt_get_num_threads(nullptr), OPRT_ERR_INVALID_ARG);
}

// Every op on (rows, cols) f32 with `threads` threads: the outputs, concatenated.
std::vector<float> run_all(int threads, int64_t rows, int64_t cols) {
    EXPECT_EQ(oprt_set_backend(OPRT_BACKEND_CPU), OPRT_SUCCESS);  // per thread: every caller
    EXPECT_EQ(oprt_set_num_threads(threads), OPRT_SUCCESS);
    const int64_t n = rows * cols;
    std::vector<float> a(static_cast<size_t>(n)), b(static_cast<size_t>(n)), result;
    for (int64_t i = 0; i < n; ++i) {
        a[size_t(i)] = std::sin(0.001f * float(i)) * 3.0f;
        b[size_t(i)] = std::cos(0.003f * float(i));
    }
    const auto x = make_view(OPRT_DTYPE_F32, {rows, cols});
    const auto row_sums = make_view(OPRT_DTYPE_F32, {rows});
    const auto col_sums = make_view(OPRT_DTYPE_F32, {cols});
    for (const auto &op : oprt_test::all_ops()) {
        std::vector<float> out(static_cast<size_t>(n));
        for (int64_t axis : {int64_t{0}, int64_t{1}}) {
            const bool reduce = op.reduces;  // reduce_sum, and any reduction added since
            if (!reduce && axis == 1 && op.kind != oprt_test::OpKind::kSoftmax) continue;
            if (op.matmul && axis == 1) continue;
            const auto &out_view = reduce ? (axis == 0 ? col_sums : row_sums) : x;
            const oprt_test::MatmulViews mm = oprt_test::matmul_views(x);  // x @ (cols, 1)
            std::string error;
            EXPECT_EQ(op.matmul ? oprt_test::run_op(op, mm.out, &mm.a, &mm.b, out.data(), a.data(), b.data(), 0,
                                                    0.0f, &error)
                                : oprt_test::run_op(op, out_view, &x, &x, out.data(), a.data(), b.data(), axis,
                                                    0.1f, &error),
                      OPRT_SUCCESS)
                << op.name << ": " << error;
            const int64_t count = op.matmul ? rows : reduce ? (axis == 0 ? cols : rows) : n;
            result.insert(result.end(), out.begin(), out.begin() + count);
        }
    }
    return result;
}

TEST(Threads, SameResultsOnAnyThreadCount) {
    ThreadsGuard guard;
    for (auto shape : {std::pair<int64_t, int64_t>{3, 100003}, {1000, 1000}, {70001, 3}}) {
        const auto one = run_all(1, shape.first, shape.second);
        for (int threads : {2, 3, 7}) {
            const auto many = run_all(threads, shape.first, shape.second);
            ASSERT_EQ(many.size(), one.size());
            for (size_t i = 0; i < one.size(); ++i)
                ASSERT_NEAR(many[i], one[i], 1e-5f * (1.0f + std::fabs(one[i])))
                    << threads << " threads, shape " << shape.first << "x" << shape.second << ", value " << i;
        }
    }
}

TEST(Threads, ConcurrentCallers) {
    ThreadsGuard guard;
    const auto expected = run_all(4, 300, 1000);
    std::vector<std::thread> callers;
    std::vector<int> ok(6, 0);
    for (size_t t = 0; t < ok.size(); ++t)
        callers.emplace_back([&, t] { ok[t] = run_all(4, 300, 1000) == expected; });
    for (auto &c : callers) c.join();
    for (size_t t = 0; t < ok.size(); ++t) EXPECT_TRUE(ok[t]) << "caller " << t;
}

TEST(Threads, ForkedChildComputes) {
    ThreadsGuard guard;
    const auto expected = run_all(2, 500, 1000);  // the parent's pool has started its workers
    const pid_t pid = fork();
    ASSERT_GE(pid, 0);
    if (pid == 0) {
        const bool same = run_all(2, 500, 1000) == expected;
        _exit(same ? 0 : 1);
    }
    int status = 0;
    ASSERT_EQ(waitpid(pid, &status, 0), pid);
    ASSERT_TRUE(WIFEXITED(status));
    EXPECT_EQ(WEXITSTATUS(status), 0);
}

}  // namespace

// The pool itself (the test binary's own copy, its load check off so that the workers
// take part even on a busy machine): every chunk runs exactly once, for many small jobs
// in a row (the claims of one job never leak into the next), from concurrent callers,
// and nested calls run serially.
namespace pool_test {

struct LoadCheckOff {
    LoadCheckOff() { oprt::cpu::set_load_check(false); }
    ~LoadCheckOff() {
        oprt::cpu::set_load_check(true);
        oprt::cpu::set_max_threads(0);
    }
};

bool covers_once(int64_t n, int64_t grain) {
    std::vector<std::atomic<int>> hits(static_cast<size_t>(n));
    oprt::cpu::parallel_for(n, grain, [&](int64_t begin, int64_t end) {
        for (int64_t i = begin; i < end; ++i) hits[size_t(i)].fetch_add(1, std::memory_order_relaxed);
    });
    for (auto &h : hits)
        if (h.load() != 1) return false;
    return true;
}

TEST(ThreadPool, EveryChunkOnceOverManyJobs) {
    LoadCheckOff off;
    for (int threads : {2, 3, 8}) {
        oprt::cpu::set_max_threads(threads);
        for (int job = 0; job < 2000; ++job)
            ASSERT_TRUE(covers_once(64 + job % 97, 4)) << threads << " threads, job " << job;
    }
}

TEST(ThreadPool, ConcurrentCallersAndNestedCalls) {
    LoadCheckOff off;
    oprt::cpu::set_max_threads(4);
    std::vector<std::thread> callers;
    std::atomic<int> failures{0};
    for (int t = 0; t < 4; ++t)
        callers.emplace_back([&] {
            for (int job = 0; job < 300; ++job) {
                if (!covers_once(1000, 10)) failures.fetch_add(1);
                std::atomic<int> inner{0};
                oprt::cpu::parallel_for(8, 1, [&](int64_t b, int64_t e) {
                    oprt::cpu::parallel_for(100, 1, [&](int64_t ib, int64_t ie) {  // serial
                        EXPECT_TRUE(oprt::cpu::in_parallel());
                        inner.fetch_add(int(ie - ib));
                    });
                    (void)b;
                    (void)e;
                });
                if (inner.load() <= 0 || inner.load() % 100 != 0) failures.fetch_add(1);
            }
        });
    for (auto &c : callers) c.join();
    EXPECT_EQ(failures.load(), 0);
}

TEST(ThreadPool, WorkersTakePartWhenCoresAreFree) {
    LoadCheckOff off;
    int cpus = 0;
    ASSERT_EQ(oprt_set_num_threads(0), OPRT_SUCCESS);  // 0: the CPUs this process may use
    ASSERT_EQ(oprt_get_num_threads(&cpus), OPRT_SUCCESS);
    if (cpus < 2) GTEST_SKIP() << "this process may use " << cpus << " CPU: no core for a worker";
    oprt::cpu::set_max_threads(2);
    // Chunks that wait a little, so that a worker woken on the other core claims some. On a
    // busy machine a worker may wait for a core, but not through 500 jobs (about 1.6 s).
    std::atomic<int> other_thread{0};
    const auto me = std::this_thread::get_id();
    for (int job = 0; job < 500 && other_thread.load() == 0; ++job)
        oprt::cpu::parallel_for(16, 1, [&](int64_t, int64_t) {
            if (std::this_thread::get_id() != me) other_thread.fetch_add(1);
            std::this_thread::sleep_for(std::chrono::microseconds(200));
        });
    EXPECT_GT(other_thread.load(), 0) << "no worker took a chunk in 500 jobs of 16 chunks of 200 us";
}

}  // namespace pool_test
