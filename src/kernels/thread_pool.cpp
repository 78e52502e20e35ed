#include "kernels/thread_pool.h"

#include <algorithm>

namespace tp::kernels {

ThreadPool::ThreadPool(int threads) {
  for (int i = 1; i < std::max(threads, 1); ++i) workers_.emplace_back([this] { worker_loop(); });
}

ThreadPool::~ThreadPool() {
  {
    std::lock_guard lock(mutex_);
    stop_ = true;
  }
  wake_.notify_all();
  for (auto& w : workers_) w.join();
}

ThreadPool& ThreadPool::shared() {
  static ThreadPool pool(int(std::max(1u, std::thread::hardware_concurrency())));
  return pool;
}

// Takes tasks until none are left; called with mutex_ unlocked.
void ThreadPool::drain() {
  for (;;) {
    int task;
    {
      std::lock_guard lock(mutex_);
      if (next_ >= tasks_) return;
      task = next_++;
    }
    (*fn_)(task);
    std::lock_guard lock(mutex_);
    if (++finished_ == tasks_) done_.notify_all();
  }
}

void ThreadPool::worker_loop() {
  long seen = 0;
  for (;;) {
    {
      std::unique_lock lock(mutex_);
      wake_.wait(lock, [&] { return stop_ || generation_ != seen; });
      if (stop_) return;
      seen = generation_;
    }
    drain();
  }
}

void ThreadPool::run(int tasks, const std::function<void(int)>& fn) {
  if (tasks <= 0) return;
  if (tasks == 1 || workers_.empty()) {
    for (int t = 0; t < tasks; ++t) fn(t);
    return;
  }
  std::lock_guard serial(run_mutex_);
  {
    std::lock_guard lock(mutex_);
    fn_ = &fn;
    tasks_ = tasks;
    next_ = 0;
    finished_ = 0;
    ++generation_;
  }
  wake_.notify_all();
  drain();
  std::unique_lock lock(mutex_);
  done_.wait(lock, [&] { return finished_ == tasks_; });
  fn_ = nullptr;
}

}  // namespace tp::kernels
