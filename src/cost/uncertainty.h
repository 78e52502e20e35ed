// What a prediction's held-out error band (spec/error_bands.h) says about the
// figure a run would measure: the range it falls in for the band's share of
// published runs, and whether a plan's memory fits even at the band's
// under-prediction. Pure functions.
#pragma once
#include <string>

#include "cost/estimate.h"
#include "spec/error_bands.h"

namespace trainplan::cost {

struct Range {
  double low = 0, high = 0;
};

// The measured figure of a prediction `predicted` whose relative error
// (predicted - measured) / measured falls in the band: [p / (1 + high), p / (1 + low)].
Range measured_range(double predicted, const spec::ErrorBand& band);

// The throughput band an estimate for `family` carries: the family's own where
// it rests on at least kMinRunsForFamilyBand runs; else every family's, widened
// to the family's own held-out errors where it has spec::kMinRunsForRanking of
// them or more and they spread further (a family its corpus prices from priors
// alone, as Gaudi 3, misses by more than the corpus at large).
inline constexpr int kMinRunsForFamilyBand = 20;
enum class BandScope { family, every_family, every_family_widened };
struct ThroughputBand {
  spec::ErrorBand band;
  BandScope scope = BandScope::every_family;
  int family_runs = 0;  // the family's held-out runs behind a widened band
};
ThroughputBand throughput_band(const spec::ErrorBands& bands, const std::string& family);

// fits: the band's upper end of the measured peak fits the capacity;
// marginal: the prediction fits but that upper end does not;
// does_not_fit: the prediction itself exceeds the capacity.
// Two plans of one job tie when the smaller's predicted objective is within
// the ranking band's half-width of the larger's: published runs of one source
// were predicted that far apart from each other (spec::ErrorBands::ranking).
// False when the band is not known.
bool tied(double objective_a, double objective_b, const spec::ErrorBand& ranking);

enum class FitVerdict { fits, marginal, does_not_fit };
FitVerdict fit_verdict(double predicted_peak_bytes, double capacity_bytes, const spec::ErrorBand& memory);
const char* to_string(FitVerdict v);

// An estimate under the held-out bands: where the measured throughput, step
// time and peak memory would fall, as figures and as multiples of the
// prediction, and the memory verdict. The throughput band is the family's
// where it has enough runs, else every family's, widened where the family's own
// spread further (throughput_band): throughput_band_scope.
struct EstimateRanges {
  spec::ErrorBand throughput, memory;
  BandScope throughput_band_scope = BandScope::every_family;
  int throughput_family_runs = 0;  // behind a widened band
  bool memory_band_has_family = false;  // the memory band holds runs of this family
  Range tokens_per_s, step_s, memory_peak_bytes;
  Range throughput_factor, memory_factor;
  FitVerdict verdict = FitVerdict::fits;
};
EstimateRanges estimate_ranges(const Estimate& estimate, const spec::ErrorBands& bands, const std::string& family);

}  // namespace trainplan::cost
