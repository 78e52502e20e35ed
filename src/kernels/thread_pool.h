// ThreadPool: one small persistent pool of worker threads. run(tasks, fn, threads)
// calls fn(0..tasks-1) spread over at most `threads` threads (workers and the calling
// thread; 0: all), tasks taken one at a time, and returns when all are done. One run
// at a time (callers are serialized). Between runs a worker spins at most
// spin_pauses() PAUSEs (yielding its CPU to other runnable threads now and then), then
// sleeps. Workers run on the process's CPUs other than the one the caller last ran a
// run() on (where there are others). shared() is sized to the host's hardware threads.
#pragma once
#include <atomic>
#include <condition_variable>
#include <functional>
#include <mutex>
#include <thread>
#include <vector>

namespace trainplan::kernels {

class ThreadPool {
 public:
  explicit ThreadPool(int threads);  // total threads including the caller, >= 1
  ~ThreadPool();
  ThreadPool(const ThreadPool&) = delete;
  ThreadPool& operator=(const ThreadPool&) = delete;

  int size() const { return int(workers_.size()) + 1; }
  void run(int tasks, const std::function<void(int)>& fn, int threads = 0);

  static ThreadPool& shared();
  // The bounded wait, counted like libgomp's GOMP_SPINCOUNT (one PAUSE per step), so a
  // benchmark can give OpenMP runtimes the same policy: about 0.5 ms on Zen 5 (23 ns per PAUSE).
  static constexpr long spin_pauses() { return 20000; }

 private:
  void worker_loop(int index);
  void drain();
  void keep_workers_off(int cpu);

  std::vector<int> cpus_;  // the CPUs the pool was created on (the workers' first mask)
  int workers_off_ = -1;   // the CPU the workers' mask leaves out now (-1: none)

  std::vector<std::thread> workers_;
  std::mutex run_mutex_;  // serializes callers of run()
  std::mutex mutex_;
  std::condition_variable wake_, done_;
  const std::function<void(int)>* fn_ = nullptr;
  int tasks_ = 0, next_ = 0, active_workers_ = 0;
  std::atomic<int> finished_{0};
  std::atomic<long> generation_{0};
  std::atomic<bool> stop_{false};
};

}  // namespace trainplan::kernels
