#include "cost/uncertainty.h"

#include <algorithm>

namespace trainplan::cost {

Range measured_range(double predicted, const spec::ErrorBand& band) {
  return {predicted / (1 + band.high), predicted / (1 + band.low)};
}

ThroughputBand throughput_band(const spec::ErrorBands& bands, const std::string& family) {
  const auto it = bands.throughput_by_family.find(family);
  if (it == bands.throughput_by_family.end() || it->second.runs < spec::kMinRunsForRanking) return {bands.throughput};
  const spec::ErrorBand& own = it->second;
  if (own.runs >= kMinRunsForFamilyBand) return {own, BandScope::family};
  if (own.low >= bands.throughput.low && own.high <= bands.throughput.high) return {bands.throughput};
  spec::ErrorBand widened = bands.throughput;
  widened.low = std::min(own.low, widened.low);
  widened.high = std::max(own.high, widened.high);
  return {widened, BandScope::every_family_widened, own.runs};
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

EstimateRanges estimate_ranges(const Estimate& e, const spec::ErrorBands& bands, const std::string& family) {
  EstimateRanges r;
  const ThroughputBand throughput = throughput_band(bands, family);
  r.throughput = throughput.band;
  r.throughput_band_scope = throughput.scope;
  r.throughput_family_runs = throughput.family_runs;
  r.memory = bands.memory;
  r.memory_band_has_family = std::find(bands.memory_families.begin(), bands.memory_families.end(), family) !=
                             bands.memory_families.end();
  r.tokens_per_s = measured_range(e.tokens_per_s, r.throughput);
  // Step time is inverse to throughput: the same relative error, the other way.
  r.step_s = {e.time.step_s * (1 + r.throughput.low), e.time.step_s * (1 + r.throughput.high)};
  r.memory_peak_bytes = measured_range(e.memory.total_bytes, r.memory);
  r.throughput_factor = measured_range(1.0, r.throughput);
  r.memory_factor = measured_range(1.0, r.memory);
  r.verdict = fit_verdict(e.memory.total_bytes, e.memory.capacity_bytes, r.memory);
  return r;
}

}  // namespace trainplan::cost
