// Times one operation: a warm-up call, then repetitions until both a time
// floor and a minimum count are reached (capped by max_reps), and on past the
// floor (up to 4x it) while the spread stays above 5%. Reports the median and
// the spread (p90 - p10) / median so noisy points can be flagged.
#pragma once
#include <functional>

namespace trainplan::calib {

struct Timing {
  double median_s = 0;
  double spread = 0;
  int reps = 0;
};

Timing time_op(const std::function<void()>& op, double floor_s, int min_reps = 3, int max_reps = 1000);

}  // namespace trainplan::calib
