// ThreadPool: one small persistent pool of worker threads. run(tasks, fn)
// calls fn(0..tasks-1) spread over the workers and the calling thread and
// returns when all are done. One run at a time (callers are serialized).
// shared() is sized to the host's hardware threads and lives for the process.
#pragma once
#include <condition_variable>
#include <functional>
#include <mutex>
#include <thread>
#include <vector>

namespace tp::kernels {

class ThreadPool {
 public:
  explicit ThreadPool(int threads);  // total threads including the caller, >= 1
  ~ThreadPool();
  ThreadPool(const ThreadPool&) = delete;
  ThreadPool& operator=(const ThreadPool&) = delete;

  int size() const { return int(workers_.size()) + 1; }
  void run(int tasks, const std::function<void(int)>& fn);

  static ThreadPool& shared();

 private:
  void worker_loop();
  void drain();

  std::vector<std::thread> workers_;
  std::mutex run_mutex_;  // serializes callers of run()
  std::mutex mutex_;
  std::condition_variable wake_, done_;
  const std::function<void(int)>* fn_ = nullptr;
  int tasks_ = 0, next_ = 0, finished_ = 0;
  long generation_ = 0;
  bool stop_ = false;
};

}  // namespace tp::kernels
