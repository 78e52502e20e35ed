#include "validate/error_bands.h"

#include <algorithm>
#include <cmath>
#include <nlohmann/json.hpp>
#include <set>

#include "cost/uncertainty.h"

namespace trainplan::validate {
namespace {

spec::ErrorBand band_of(const std::vector<double>& errors, double coverage) {
  spec::ErrorBand b;
  b.runs = int(errors.size());
  b.low = quantile(errors, (1 - coverage) / 2);
  b.median = quantile(errors, 0.5);
  b.high = quantile(errors, 1 - (1 - coverage) / 2);
  return b;
}

bool has_memory_error(const RunResult& r) { return r.run.memory && r.problem == cost::PlanProblem::none; }

}  // namespace

double quantile(std::vector<double> values, double q) {
  if (values.empty()) return 0;
  std::sort(values.begin(), values.end());
  const double at = std::clamp(q, 0.0, 1.0) * double(values.size() - 1);
  const size_t below = size_t(std::floor(at));
  const size_t above = std::min(below + 1, values.size() - 1);
  return values[below] + (at - double(below)) * (values[above] - values[below]);
}

spec::ErrorBands error_bands(const ValidationResult& result, double coverage, const std::string& computed_on) {
  std::vector<double> throughput, memory;
  std::map<std::string, std::vector<double>> by_family;
  std::set<std::string> families;
  for (const RunResult& r : result.runs) {
    if (r.timed) {  // held out as estimate would have priced it: the calibration its lookup finds
      throughput.push_back(r.error_as_priced);
      by_family[r.family].push_back(r.error_as_priced);
    }
    if (has_memory_error(r)) {
      memory.push_back(r.memory_error);
      families.insert(r.family);
    }
  }
  spec::ErrorBands bands;
  bands.coverage = coverage;
  bands.computed_on = computed_on;
  bands.throughput = band_of(throughput, coverage);
  for (const auto& [family, errors] : by_family) bands.throughput_by_family[family] = band_of(errors, coverage);
  bands.memory = band_of(memory, coverage);
  bands.memory_families.assign(families.begin(), families.end());
  std::map<std::string, std::vector<double>> by_source;
  for (const RunResult& r : result.runs)
    if (r.timed) by_source[r.run.source_id].push_back(r.error_cross_source);
  std::vector<double> within_source;
  for (const auto& [source, errors] : by_source) {
    if (int(errors.size()) < spec::kMinRunsForRanking) continue;
    const double centre = quantile(errors, 0.5);
    for (double e : errors) within_source.push_back(e - centre);
  }
  bands.ranking = band_of(within_source, coverage);
  return bands;
}

HeldOutVerdicts held_out_fit_verdicts(const ValidationResult& result, double coverage) {
  HeldOutVerdicts out;
  for (const RunResult& r : result.runs) {
    if (r.problem != cost::PlanProblem::none) continue;
    std::vector<double> others;
    for (const RunResult& o : result.runs)
      if (has_memory_error(o) && o.run.source_id != r.run.source_id) others.push_back(o.memory_error);
    const cost::FitVerdict v = cost::fit_verdict(r.estimate.memory.total_bytes, r.estimate.memory.capacity_bytes,
                                                 band_of(others, coverage));
    VerdictCounts& counts = r.run.out_of_memory ? out.published_oom : out.ran;
    (v == cost::FitVerdict::fits ? counts.fits : v == cost::FitVerdict::marginal ? counts.marginal : counts.does_not_fit)++;
  }
  return out;
}

}  // namespace trainplan::validate
