// The workflows of `validate` and `calibrate fit`: the step model against the
// published runs (with the published-choice checks and the held-out error
// bands), and one family's (or stack's) calibration fitted on them, as a file
// to write. Rendering and writing are the caller's.
#pragma once
#include <functional>
#include <string>
#include <vector>

#include "app/published_choices.h"
#include "spec/calibration_io.h"
#include "spec/error_bands.h"
#include "validate/fit.h"
#include "validate/validation.h"

namespace trainplan::app {

// The share of runs each held-out band holds between its low and high ends.
inline constexpr double kErrorBandCoverage = 0.8;

std::string default_measured_dir();
std::string default_choices_dir();

struct ValidationQuery {
  std::string measured;  // empty: default_measured_dir()
  std::string choices;   // empty: default_choices_dir()
  std::string stack;     // only the runs of this stack (a name or a stacks/ file); empty: all
  bool leave_one_run_out = true;
  // Hears (runs validated so far, runs in all) as the fits go: a progress bar.
  std::function<void(std::size_t done, std::size_t total)> progress;
};

struct ValidationOutcome {
  validate::ValidationResult result;
  std::vector<ChoiceCheck> choices;
  spec::ErrorBands bands;  // kErrorBandCoverage of the held-out errors
};

ValidationOutcome run_validation(const ValidationQuery& query);

struct FitQuery {
  std::string measured;  // empty: default_measured_dir()
  std::string hardware;  // the runs of its accelerator family are fitted
  std::string stack;     // only this stack's runs; empty: every stack on the family
};

struct FitOutcome {
  std::string family;
  int runs = 0;  // 0: no run to fit; nothing else is set
  std::vector<validate::FitParameter> parameters;
  validate::FitResult fit;
  spec::CalibrationFile file;  // the calibration with its fit's record, ready to save
};

FitOutcome fit_calibration(const FitQuery& query);

}  // namespace trainplan::app
