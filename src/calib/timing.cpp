#include "calib/timing.h"

#include <algorithm>
#include <chrono>
#include <vector>

namespace trainplan::calib {

Timing time_op(const std::function<void()>& op, double floor_s, int min_reps, int max_reps) {
  using Clock = std::chrono::steady_clock;
  op();
  std::vector<double> t, sorted;
  double total = 0;
  Timing out;
  auto summarize = [&] {
    sorted = t;
    std::sort(sorted.begin(), sorted.end());
    const size_t n = sorted.size();
    out.reps = int(n);
    out.median_s = n % 2 ? sorted[n / 2] : 0.5 * (sorted[n / 2 - 1] + sorted[n / 2]);
    const double p10 = sorted[n / 10], p90 = sorted[std::min(n - 1, (n * 9) / 10)];
    out.spread = out.median_s > 0 ? (p90 - p10) / out.median_s : 0;
  };
  for (;;) {
    auto s = Clock::now();
    op();
    t.push_back(std::chrono::duration<double>(Clock::now() - s).count());
    total += t.back();
    if (int(t.size()) >= max_reps) break;
    if (total < floor_s || int(t.size()) < min_reps) continue;
    // Past the floor: stop once the spread is small, or at 4x the floor on a machine that stays noisy.
    summarize();
    if (out.spread <= 0.05 || total >= 4 * floor_s) break;
  }
  summarize();
  return out;
}

}  // namespace trainplan::calib
