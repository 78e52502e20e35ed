// ThreadPool: every task runs exactly once, on no more threads than asked for, and
// runs back to back (workers spinning) or after a pause (workers asleep) both complete.
#include "kernels/thread_pool.h"

#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <mutex>
#include <set>
#include <thread>
#include <vector>

using tp::kernels::ThreadPool;

namespace {

struct Record {
  std::vector<std::atomic<int>> runs;
  std::mutex mutex;
  std::set<std::thread::id> threads;
  explicit Record(int tasks) : runs(static_cast<size_t>(tasks)) {}
  void operator()(int t) {
    runs[static_cast<size_t>(t)]++;
    std::lock_guard lock(mutex);
    threads.insert(std::this_thread::get_id());
  }
};

}  // namespace

TEST(ThreadPool, EveryTaskOnceWithinTheThreadCap) {
  ThreadPool pool(3);
  for (int cap : {1, 2, 0}) {
    Record r(40);
    pool.run(40, [&](int t) { r(t); }, cap);
    for (auto& n : r.runs) EXPECT_EQ(n.load(), 1);
    EXPECT_LE(int(r.threads.size()), cap == 0 ? pool.size() : cap);
    if (cap == 1) EXPECT_EQ(*r.threads.begin(), std::this_thread::get_id());
  }
}

TEST(ThreadPool, BackToBackAndAfterSleeping) {
  ThreadPool pool(2);
  for (int round = 0; round < 50; ++round) {
    // Every tenth round waits past the workers' spin, so they have gone to sleep.
    if (round % 10 == 9) std::this_thread::sleep_for(std::chrono::milliseconds(5));
    Record r(7);
    pool.run(7, [&](int t) { r(t); });
    for (auto& n : r.runs) ASSERT_EQ(n.load(), 1) << "round " << round;
  }
}
