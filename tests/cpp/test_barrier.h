// A reusable barrier for the concurrency tests (CPU and GPU): every thread
// waits in arrive_and_wait() until all have arrived, so their runs overlap.
#pragma once

#include <condition_variable>
#include <mutex>

namespace oprt_test {

class Barrier {
public:
    explicit Barrier(int count) : count_(count) {}
    void arrive_and_wait() {
        std::unique_lock<std::mutex> lock(mutex_);
        const int generation = generation_;
        if (++arrived_ == count_) {
            arrived_ = 0;
            ++generation_;
            cv_.notify_all();
            return;
        }
        cv_.wait(lock, [&] { return generation != generation_; });
    }

private:
    std::mutex mutex_;
    std::condition_variable cv_;
    int count_, arrived_ = 0, generation_ = 0;
};

}  // namespace oprt_test
