// ThreadPool: every task runs exactly once, on no more threads than asked for, and
// runs back to back (workers spinning) or after a pause (workers asleep) both complete;
// workers are kept off the caller's CPU where the pool has others.
#include "kernels/thread_pool.h"

#include <gtest/gtest.h>
#include <sched.h>

#include <atomic>
#include <chrono>
#include <mutex>
#include <set>
#include <thread>
#include <vector>

using trainplan::kernels::ThreadPool;

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

// The caller pinned to one CPU: every task a worker runs sees a mask without that CPU (a
// worker woken onto the caller's CPU took it over), and every task still runs once.
TEST(ThreadPool, WorkersKeptOffTheCallersCpu) {
  cpu_set_t original;
  ASSERT_EQ(sched_getaffinity(0, sizeof original, &original), 0);
  if (CPU_COUNT(&original) < 2) GTEST_SKIP() << "one CPU";
  ThreadPool pool(2);  // created on all the CPUs
  int all_worker_tasks = 0;
  for (int cpu = 0, tried = 0; cpu < CPU_SETSIZE && tried < 2; ++cpu) {
    if (!CPU_ISSET(cpu, &original)) continue;
    ++tried;
    cpu_set_t one;
    CPU_ZERO(&one);
    CPU_SET(cpu, &one);
    ASSERT_EQ(sched_setaffinity(0, sizeof one, &one), 0);
    std::atomic<int> worker_tasks{0}, on_callers_cpu{0};
    Record r(64);
    const auto caller = std::this_thread::get_id();
    pool.run(64, [&](int t) {
      r(t);
      std::this_thread::sleep_for(std::chrono::microseconds(50));  // long enough for the worker to wake
      if (std::this_thread::get_id() == caller) return;
      ++worker_tasks;
      cpu_set_t mask;
      if (sched_getaffinity(0, sizeof mask, &mask) != 0 || CPU_ISSET(cpu, &mask)) ++on_callers_cpu;
    }, 2);
    for (auto& n : r.runs) EXPECT_EQ(n.load(), 1);
    EXPECT_EQ(on_callers_cpu.load(), 0) << "CPU " << cpu << ", " << worker_tasks.load() << " worker tasks";
    all_worker_tasks += worker_tasks;
  }
  sched_setaffinity(0, sizeof original, &original);
  EXPECT_GT(all_worker_tasks, 0) << "the worker never ran a task: nothing checked";
}
