#include "cost/uncertainty.h"

#include <algorithm>

namespace tp::cost {

Range measured_range(double predicted, const spec::ErrorBand& band) {
  return {predicted / (1 + band.high), predicted / (1 + band.low)};
}

const spec::ErrorBand& throughput_band(const spec::ErrorBands& bands, const std::string& family) {
  const auto it = bands.throughput_by_family.find(family);
  return it != bands.throughput_by_family.end() && it->second.runs >= kMinRunsForFamilyBand ? it->second
                                                                                             : bands.throughput;
}

bool tied(double a, double b, const spec::ErrorBand& ranking) {
  if (ranking.runs == 0 || !(a > 0) || !(b > 0)) return false;
  const double half_width = (ranking.high - ranking.low) / 2;
  return std::max(a, b) / std::min(a, b) - 1 <= half_width;
}

FitVerdict fit_verdict(double predicted_peak_bytes, double capacity_bytes, const spec::ErrorBand& memory) {
  if (predicted_peak_bytes > capacity_bytes) return FitVerdict::does_not_fit;
  return measured_range(predicted_peak_bytes, memory).high > capacity_bytes ? FitVerdict::marginal : FitVerdict::fits;
}

const char* to_string(FitVerdict v) {
  switch (v) {
    case FitVerdict::fits: return "fits";
    case FitVerdict::marginal: return "marginal";
    case FitVerdict::does_not_fit: return "does not fit";
  }
  return "fits";
}

}  // namespace tp::cost
