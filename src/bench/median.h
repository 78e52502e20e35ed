// The median of repeated timings: benchmarks on a shared, noisy machine
// report it so interference shows as spread rather than bias. Upper median for
// even counts; the input is taken by value and sorted.
#pragma once
#include <algorithm>
#include <vector>

namespace trainplan::bench {

inline double median(std::vector<double> values) {
  std::sort(values.begin(), values.end());
  return values[values.size() / 2];
}

}  // namespace trainplan::bench
