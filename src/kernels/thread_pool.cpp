#include "kernels/thread_pool.h"

#include <pthread.h>
#include <sched.h>

#include <algorithm>

namespace trainplan::kernels {
namespace {
inline void cpu_relax() {
#if defined(__x86_64__) || defined(__i386__)
  __builtin_ia32_pause();
#endif
}

// A waiting thread's PAUSE loop gives its CPU up every this many PAUSEs (~3 us on Zen 5)
// where another thread is runnable there: under load the worker often shares a CPU with
// the caller, and spinning held the caller off it (16 x 20 us tasks after 2 ms idle with
// a busy second CPU: 795 us median, the worker's whole spin after the tasks; 333 us so).
constexpr long kPausesPerYield = 128;
inline void pause_or_yield(long i) {
  cpu_relax();
  if (i % kPausesPerYield == kPausesPerYield - 1) sched_yield();
}
}  // namespace

ThreadPool::ThreadPool(int threads) {
  cpu_set_t mask;
  if (sched_getaffinity(0, sizeof mask, &mask) == 0)
    for (int c = 0; c < CPU_SETSIZE; ++c)
      if (CPU_ISSET(c, &mask)) cpus_.push_back(c);
  for (int i = 1; i < std::max(threads, 1); ++i) workers_.emplace_back([this, i] { worker_loop(i - 1); });
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
    if (finished_.fetch_add(1) + 1 == tasks_) done_.notify_all();
  }
}

// A short spin before sleeping: a worker that sleeps on the condition variable can take
// a long time to run again where an idle (virtual) CPU halts, so back-to-back runs would
// each pay that wake-up; the bound keeps an idle pool off the CPU soon after the last run.
void ThreadPool::worker_loop(int index) {
  long seen = 0;
  for (;;) {
    for (long i = 0; i < spin_pauses() && generation_.load(std::memory_order_acquire) == seen && !stop_; ++i) pause_or_yield(i);
    bool mine;
    {
      std::unique_lock lock(mutex_);
      wake_.wait(lock, [&] { return stop_ || generation_ != seen; });
      if (stop_) return;
      seen = generation_;
      mine = index < active_workers_;
    }
    if (mine) drain();
  }
}

// A worker woken while the other CPU ran another process came up on the caller's CPU and
// took it over (the caller preempted until the worker slept again), so a 2-thread call ran
// slower than on 1 thread. Kept off the caller's CPU, it competes for the others instead.
// With the yielding spin, 2-thread GEMMs after 2 ms idle, medians: beside a busy loop
// 1.25-1.65x on 12 shapes (64,1024,1024 NN 1.27x, 512,1024,256 TN 1.60x; either change
// alone 0.86-1.53x); at load 4.5 from a build, with kernels_bench's waiting policy,
// 1.1-4.3x on 8 shapes (512,1024,1024 NT 402 -> 773 GFLOP/s). A syscall per worker, and
// only where the caller has moved.
void ThreadPool::keep_workers_off(int cpu) {
  if (cpu < 0 || cpu == workers_off_ || cpus_.size() < 2) return;
  cpu_set_t mask;
  CPU_ZERO(&mask);
  for (int c : cpus_)
    if (c != cpu) CPU_SET(c, &mask);
  if (CPU_COUNT(&mask) == 0) return;  // the caller's CPU is the pool's only one
  for (auto& w : workers_) pthread_setaffinity_np(w.native_handle(), sizeof mask, &mask);
  workers_off_ = cpu;
}

void ThreadPool::run(int tasks, const std::function<void(int)>& fn, int threads) {
  if (tasks <= 0) return;
  const int workers = std::min({threads > 0 ? threads - 1 : size() - 1, size() - 1, tasks - 1});
  if (workers <= 0) {
    for (int t = 0; t < tasks; ++t) fn(t);
    return;
  }
  std::lock_guard serial(run_mutex_);
  keep_workers_off(sched_getcpu());
  {
    std::lock_guard lock(mutex_);
    fn_ = &fn;
    tasks_ = tasks;
    next_ = 0;
    finished_ = 0;
    active_workers_ = workers;
    ++generation_;
  }
  // After a worker has slept (idle past its spin), caller and worker often run as if they
  // shared one CPU (the other busy with another process, or its virtual CPU not running):
  // 4 tasks of 333 us after 2 ms idle took 1.40 ms median (serial), 0.74 ms after 0.1 ms
  // idle (2 CPUs, load ~0.6 from elsewhere); in kernels_bench the worker starts within
  // ~10 us, yet each half of 32,1024,4096 NN takes as long as the whole on 1 thread.
  // Tried, not kept: a worker refusing tasks on the caller's CPU (sched_getcpu)
  // halved that toy's time but slowed 32,1024,4096 NN on 2 threads after 2 ms idle from
  // 0.87-0.97 to 1.55-1.60 ms median; yielding instead of sleeping in the final wait: no change.
  wake_.notify_all();
  drain();
  // The workers' last tasks: spin briefly (a tenth of the idle spin), then sleep. A longer
  // spin holds this CPU while a worker that is runnable but queued behind another process
  // could have been moved onto it.
  for (long i = 0; i < spin_pauses() / 10 && finished_.load(std::memory_order_acquire) != tasks; ++i) pause_or_yield(i);
  std::unique_lock lock(mutex_);
  done_.wait(lock, [&] { return finished_ == tasks_; });
  fn_ = nullptr;
}

}  // namespace trainplan::kernels
