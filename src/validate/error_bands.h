// The held-out error bands of a validation (spec/error_bands.h), and how the
// memory band sorts the runs: each run's fit verdict with a band computed
// without its own source, so no run is judged by its own error.
#pragma once
#include <vector>

#include "spec/error_bands.h"
#include "validate/validation.h"

namespace trainplan::validate {

// Linear-interpolation quantile (q in [0, 1]) of unsorted values; 0 for none.
double quantile(std::vector<double> values, double q);

// Step time from the held-out predictions as estimate prices them (each run's
// source left out; RunResult::error_as_priced: its stack's or a base stack's fit
// where one exists, else the family's), memory from every run with measured
// memory; `computed_on` says which corpus.
spec::ErrorBands error_bands(const ValidationResult& result, double coverage, const std::string& computed_on);

struct VerdictCounts {
  int fits = 0, marginal = 0, does_not_fit = 0;
};

struct HeldOutVerdicts {
  VerdictCounts ran, published_oom;  // runs the model can express
};

HeldOutVerdicts held_out_fit_verdicts(const ValidationResult& result, double coverage);

}  // namespace trainplan::validate
