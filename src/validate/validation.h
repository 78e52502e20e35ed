// Validation of the step model against measured runs: per hardware, one fit on
// all its runs (in-sample) and one fit per run without it (leave-one-out, the
// honest figure); per run the measured and predicted seq/s, the signed error
// and the scaling efficiency (seq/s per device against the table's smallest
// cluster); mean absolute percentage errors per table and overall.
#pragma once
#include <string>
#include <vector>

#include "spec/calibration.h"
#include "cost/estimate.h"
#include "validate/fit.h"
#include "validate/measured_run.h"

namespace tp::validate {

struct RunResult {
  MeasuredRun run;
  int devices = 0;
  double predicted_in_sample = 0, predicted_loo = 0;  // seq/s
  double error_in_sample = 0, error_loo = 0;          // (predicted - measured) / measured
  double efficiency_measured = 0, efficiency_in_sample = 0, efficiency_loo = 0;
  cost::Estimate estimate;  // in-sample, for the step-time breakdown
};

struct TableResult {
  std::string table, hardware;
  std::vector<size_t> runs;  // indices into ValidationResult::runs, ascending instances
  double mape_in_sample = 0, mape_loo = 0;
};

struct HardwareFit {
  std::string hardware;
  FitResult in_sample;
  std::vector<FitParameter> parameters;
  std::vector<FitResult> leave_one_out;  // one per run of this hardware, in run order
};

struct ValidationResult {
  std::vector<RunResult> runs;
  std::vector<TableResult> tables;
  std::vector<HardwareFit> fits;
  double mape_in_sample = 0, mape_loo = 0;
  double max_abs_error_loo = 0;
};

// `start` supplies the curve shapes and unfitted fields for every hardware.
ValidationResult validate_runs(const std::vector<MeasuredRun>& runs, const spec::Calibration& start,
                               const std::vector<FitParameter>& parameters = default_fit_parameters());

// The runs of one hardware, in input order.
std::vector<MeasuredRun> runs_on(const std::vector<MeasuredRun>& runs, const std::string& hardware);

}  // namespace tp::validate
