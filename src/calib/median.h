// The middle value of a sample, the mean of the two middle values for an even
// count, 0 for none: how every error summary in calib reports its centre.
#pragma once
#include <algorithm>
#include <vector>

namespace trainplan::calib {

inline double median(std::vector<double> v) {
  if (v.empty()) return 0;
  std::sort(v.begin(), v.end());
  const std::size_t h = v.size() / 2;
  return v.size() % 2 ? v[h] : 0.5 * (v[h - 1] + v[h]);
}

}  // namespace trainplan::calib
