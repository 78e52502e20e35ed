#include "calib/timing.h"

#include <algorithm>
#include <chrono>
#include <vector>

namespace tp::calib {

Timing time_op(const std::function<void()>& op, double floor_s, int min_reps, int max_reps) {
  using Clock = std::chrono::steady_clock;
  op();
  std::vector<double> t;
  double total = 0;
  while ((total < floor_s || int(t.size()) < min_reps) && int(t.size()) < max_reps) {
    auto s = Clock::now();
    op();
    t.push_back(std::chrono::duration<double>(Clock::now() - s).count());
    total += t.back();
  }
  std::sort(t.begin(), t.end());
  Timing out;
  out.reps = int(t.size());
  out.median_s = t[t.size() / 2];
  const double p10 = t[t.size() / 10], p90 = t[(t.size() * 9) / 10 == t.size() ? t.size() - 1 : (t.size() * 9) / 10];
  out.spread = out.median_s > 0 ? (p90 - p10) / out.median_s : 0;
  return out;
}

}  // namespace tp::calib
