// Progress: a one-line progress bar for long searches. add() is thread-safe
// (atomic count); the line is redrawn at most every min_interval_s (default
// 0.1 s, ~10 per second) and only when enabled, which for_stderr() sets from
// isatty(stderr) and a quiet flag. finish() (or the destructor) ends the line.
#pragma once
#include <atomic>
#include <chrono>
#include <cstdint>
#include <functional>
#include <mutex>
#include <ostream>
#include <string>

namespace trainplan::report {

struct ProgressOptions {
  bool enabled = true;
  double min_interval_s = 0.1;
  int bar_width = 30;
  std::string label;
  // Monotonic clock in seconds; tests inject their own.
  std::function<double()> now_s;

  // enabled = !quiet && stderr is a terminal.
  static ProgressOptions for_stderr(bool quiet, std::string label = {});
};

class Progress {
 public:
  Progress(std::ostream& out, std::int64_t total, ProgressOptions options = {});
  ~Progress();
  Progress(const Progress&) = delete;
  Progress& operator=(const Progress&) = delete;

  void add(std::int64_t done = 1);  // any thread
  void finish();                    // draws 100% state and a newline, once
  std::int64_t count() const { return done_.load(std::memory_order_relaxed); }
  int redraws() const { return redraws_; }  // lines drawn so far (for tests)

  // The line as drawn, without the leading carriage return (for tests).
  std::string line(std::int64_t done, double elapsed_s) const;

 private:
  void draw(std::int64_t done, double now_s);

  std::ostream& out_;
  const std::int64_t total_;
  ProgressOptions options_;
  double start_s_ = 0;
  std::atomic<std::int64_t> done_{0};
  std::atomic<double> last_draw_s_;
  std::mutex draw_mutex_;
  int redraws_ = 0;
  bool finished_ = false;
};

// For work that reports (units done so far, units in all) as it goes: the bar
// starts on the first report (when the total is known) and ends once done
// reaches the total.
std::function<void(std::int64_t done, std::int64_t total)> progress_reporter(std::ostream& out, ProgressOptions options);

}  // namespace trainplan::report
