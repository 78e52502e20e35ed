#include "report/progress.h"

#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <memory>

namespace trainplan::report {
namespace {

double steady_now_s() {
  return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count();
}

std::string clock_text(double seconds) {
  if (!std::isfinite(seconds) || seconds < 0) return "--:--";
  const long total = std::lround(seconds);
  char buffer[32];
  if (total >= 3600) {
    std::snprintf(buffer, sizeof buffer, "%ld:%02ld:%02ld", total / 3600, total / 60 % 60, total % 60);
  } else {
    std::snprintf(buffer, sizeof buffer, "%02ld:%02ld", total / 60, total % 60);
  }
  return buffer;
}

}  // namespace

ProgressOptions ProgressOptions::for_stderr(bool quiet, std::string label) {
  ProgressOptions options;
  options.enabled = !quiet && ::isatty(STDERR_FILENO) == 1;
  options.label = std::move(label);
  return options;
}

Progress::Progress(std::ostream& out, std::int64_t total, ProgressOptions options)
    : out_(out), total_(std::max<std::int64_t>(total, 0)), options_(std::move(options)) {
  if (!options_.now_s) options_.now_s = steady_now_s;
  start_s_ = options_.now_s();
  // The first add() draws at once; later ones wait min_interval_s.
  last_draw_s_.store(start_s_ - options_.min_interval_s - 1.0);
}

Progress::~Progress() { finish(); }

std::string Progress::line(std::int64_t done, double elapsed_s) const {
  const double fraction = total_ > 0 ? std::clamp(double(done) / double(total_), 0.0, 1.0) : 1.0;
  const int filled = static_cast<int>(std::lround(fraction * options_.bar_width));
  const double rate = elapsed_s > 0 ? done / elapsed_s : 0.0;
  const double eta_s = rate > 0 ? (total_ - done) / rate : std::nan("");
  char numbers[160];
  std::snprintf(numbers, sizeof numbers, " %5.1f%%  %lld/%lld  %.1f/s  ETA %s", fraction * 100.0,
                static_cast<long long>(done), static_cast<long long>(total_), rate,
                done >= total_ ? "00:00" : clock_text(eta_s).c_str());
  std::string text = options_.label;
  if (!text.empty()) text += ' ';
  text += '[';
  text.append(static_cast<std::size_t>(filled), '#');
  text.append(static_cast<std::size_t>(options_.bar_width - filled), '.');
  text += ']';
  text += numbers;
  return text;
}

void Progress::draw(std::int64_t done, double now_s) {
  // "\r" returns to the line start; ESC[K clears what a longer previous line left.
  out_ << '\r' << line(done, now_s - start_s_) << "\x1b[K" << std::flush;
  ++redraws_;
}

void Progress::add(std::int64_t done) {
  const std::int64_t now_done = done_.fetch_add(done, std::memory_order_relaxed) + done;
  if (!options_.enabled) return;
  const double now = options_.now_s();
  double last = last_draw_s_.load(std::memory_order_relaxed);
  if (now - last < options_.min_interval_s) return;
  // One thread wins the right to draw this tick; the others skip.
  if (!last_draw_s_.compare_exchange_strong(last, now, std::memory_order_relaxed)) return;
  std::lock_guard<std::mutex> lock(draw_mutex_);
  if (!finished_) draw(now_done, now);
}

void Progress::finish() {
  std::lock_guard<std::mutex> lock(draw_mutex_);
  if (finished_) return;
  finished_ = true;
  if (!options_.enabled) return;
  draw(done_.load(std::memory_order_relaxed), options_.now_s());
  out_ << '\n' << std::flush;
}

std::function<void(std::int64_t, std::int64_t)> progress_reporter(std::ostream& out, ProgressOptions options) {
  auto bar = std::make_shared<std::unique_ptr<Progress>>();
  return [&out, options = std::move(options), bar](std::int64_t done, std::int64_t total) {
    if (!*bar) *bar = std::make_unique<Progress>(out, total, options);
    (*bar)->add(done - (*bar)->count());
    if (done == total) (*bar)->finish();
  };
}

}  // namespace trainplan::report
