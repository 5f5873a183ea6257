// A child made by fork() after the parent ran operators over threads runs
// every operator (the CPU pool's pthread_atfork handler gives the child a new
// pool: the parent's workers do not survive a fork).
// A hang fails the test: the parent waits a bounded time, then kills the child.
#include <gtest/gtest.h>

#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <string>
#include <thread>
#include <vector>

#include "test_support.h"

namespace {
using namespace oprt_test;

// Runs every operator on shapes above the parallel threshold (and one long row
// that reduce_sum splits across threads); true when all succeed with the right
// values for the ops whose result is easy to state.
bool run_all_ops(std::string *error) {
    const std::vector<std::vector<int64_t>> shapes = {{256, 512}, {1, 1 << 17}, {1 << 17, 2}};
    for (const std::vector<int64_t> &shape : shapes) {
        const int64_t n = shape[0] * shape[1];
        std::vector<float> in(size_t(n), 0.5f), out(size_t(n), 0.0f);
        const oprt_tensor_view_t in_view = make_view(OPRT_DTYPE_F32, shape);
        for (const OpSpec &op : all_ops()) {
            const oprt_tensor_view_t out_view =
                make_view(OPRT_DTYPE_F32, op.reduces ? std::vector<int64_t>{shape[0]} : shape);
            const MatmulViews mm = matmul_views(in_view);  // in @ (cols, 1): out (rows, 1)
            const oprt_status_t s =
                op.matmul ? run_op(op, mm.out, &mm.a, &mm.b, out.data(), in.data(), in.data(), 0, 0.0f, error)
                          : run_op(op, out_view, &in_view, &in_view, out.data(), in.data(), in.data(), 1, 0.0f, error);
            if (s != OPRT_SUCCESS) return false;
            const bool one_per_row = op.reduces || op.matmul;
            const float want = op.kind == OpKind::kReduceSum ? 0.5f * float(shape[1])
                               : op.matmul ? 0.25f * float(shape[1])
                               : op.kind == OpKind::kVectorAdd ? 1.0f
                               : op.kind == OpKind::kCopy || op.kind == OpKind::kRelu ? 0.5f
                                                                                    : out[0];
            if (out[0] != want || out[size_t(one_per_row ? shape[0] : n) - 1] != want) {
                *error = std::string(op.name) + ": wrong value";
                return false;
            }
        }
    }
    return true;
}

TEST(Fork, ChildRunsEveryOperatorAfterParentUsedThreads) {
    BackendGuard cpu(OPRT_BACKEND_CPU);
    std::string error;
    ASSERT_TRUE(run_all_ops(&error)) << error;  // the parent's thread pool is up now
    const pid_t child = fork();
    ASSERT_GE(child, 0);
    if (child == 0) {
        std::string child_error;
        const bool ok = run_all_ops(&child_error);
        if (!ok) std::fprintf(stderr, "child: %s\n", child_error.c_str());
        _exit(ok ? 0 : 1);
    }
    int status = 0;
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(60);
    pid_t done = 0;
    while ((done = waitpid(child, &status, WNOHANG)) == 0 && std::chrono::steady_clock::now() < deadline)
        std::this_thread::sleep_for(std::chrono::milliseconds(10));
    if (done == 0) {
        kill(child, SIGKILL);
        waitpid(child, &status, 0);
        FAIL() << "the forked child did not finish within 60 s (hung in a parallel region?)";
    }
    ASSERT_TRUE(WIFEXITED(status)) << "the child died of a signal";
    EXPECT_EQ(WEXITSTATUS(status), 0) << "the child's operators failed (see its stderr)";
    ASSERT_TRUE(run_all_ops(&error)) << error;  // the parent still runs in parallel
}

}  // namespace
