// Validation of the step model against measured runs. Runs are grouped by
// accelerator family (a100, h100, trainium1, gaudi1), and one set of factors is
// fitted per family across every stack on it. Per run: in-sample, leave one
// run out, and leave one source out (fitted on the family's other sources
// only; a source alone on its family is predicted from the priors: nothing
// fitted). Memory has no fitted term: its error is the same in and out of
// sample. MAPE per table, source, stack and family; the fit boundary (runs that
// ran but are refused, published out-of-memory runs accepted). Held out "as
// priced": what estimate would predict for a source it never saw, fitted on the
// other sources' runs of the run's own stack, or else of the nearest stack it
// extends, where they number kOwnStackFitRuns or more (as
// data/calibration/<family>+<stack>.json is, and as spec::find_calibration
// falls back along "extends"), else the family's leave-one-source-out figure.
#pragma once
#include <functional>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "cost/estimate.h"
#include "cost/plan_check.h"
#include "spec/calibration.h"
#include "validate/fit.h"
#include "validate/measured_run.h"

namespace trainplan::validate {

// A stack with this many timed runs on a family gets a fit of its own, as
// setup/fit-calibrations.sh writes data/calibration/<family>+<stack>.json.
inline constexpr int kOwnStackFitRuns = 5;

struct RunResult {
  MeasuredRun run;  // resolved: measured_seqs_per_s set where a speed was published
  std::string family;
  int devices = 0;
  cost::PlanProblem problem = cost::PlanProblem::none;  // the model cannot express the plan (not memory)
  bool timed = false;  // has a measured speed and a plan the model runs
  double predicted_in_sample = 0, predicted_loo = 0, predicted_cross_source = 0, predicted_as_priced = 0;  // seq/s
  double error_in_sample = 0, error_loo = 0, error_cross_source = 0, error_as_priced = 0;  // predicted / measured - 1
  bool priced_by_stack_fit = false;  // as priced, by its stack's (or a base stack's) fit on other sources, else the family's
  double efficiency_measured = 0, efficiency_in_sample = 0;
  cost::Estimate estimate;  // in-sample, for the step-time and memory breakdowns
  // Of the stage the measurement names (the heavier when unnamed), among the parts the run's counter sees.
  std::string memory_largest_component;
  double memory_predicted_bytes = 0;  // as the run's counter sees it (0 without measured memory)
  double memory_error = 0;            // (predicted - measured) / measured
  bool refused_for_memory = false;    // the model says it does not fit
};

struct TableResult {
  std::string table, hardware;
  std::vector<size_t> runs;  // timed runs, indices into ValidationResult::runs, ascending devices
  double mape_in_sample = 0, mape_loo = 0, mape_cross_source = 0;
};

// MAPE of one group (a source, a stack or a family).
struct GroupError {
  int timed_runs = 0, memory_runs = 0;
  double mape_in_sample = 0, mape_loo = 0, mape_cross_source = 0;
  double memory_mape = 0;
  double mape_as_priced = 0;  // held out, by the stack's own fit where it has one (RunResult::error_as_priced)
  int priced_by_stack_fit = 0;  // runs so priced
};

struct FamilyFit {
  std::string family;
  FitResult in_sample;
  std::vector<FitParameter> parameters;
  std::map<std::string, FitResult> without_source;  // source_id -> fit on the others
};

struct ValidationResult {
  std::vector<RunResult> runs;
  std::vector<TableResult> tables;
  std::vector<FamilyFit> fits;
  std::map<std::string, GroupError> by_source, by_stack, by_family;
  // By kind of run (run_kinds below): a run counts in each kind it is.
  std::map<std::string, GroupError> by_kind;
  GroupError overall;
  double max_abs_error_loo = 0;
  double max_source_mape_cross = 0;  // the worst source when held out
  // Fit boundary.
  int ran = 0, ran_refused = 0;          // runs that ran (timed or with memory) the model refuses for memory
  int published_oom = 0, oom_refused = 0;
  int not_expressible = 0;               // plans the model cannot run at all (listed per run)
  // Rows kept for the record and used nowhere (MeasuredRun::left_out): run id, why.
  std::vector<std::pair<std::string, std::string>> left_out;
};

// The kinds a run is, for the error of the models people train now apart
// from the rest: "mixture of experts", "long context (CP > 1 or 32k+ tokens)",
// "fp8", each of those also as "moe, long context or fp8", and otherwise
// "dense 16-bit under 32k tokens".
std::vector<std::string> run_kinds(const RunResult& r);

// `start` supplies the curve shapes and unfitted fields for every family.
// leave_one_run_out: the per-run refits (slow on a large corpus).
// runs_done, when set, hears how many of `runs` are validated so far (a
// progress bar's count; the total is runs.size()).
ValidationResult validate_runs(const std::vector<MeasuredRun>& runs, const spec::Calibration& start,
                               const std::vector<FitParameter>& parameters = default_fit_parameters(),
                               bool leave_one_run_out = true,
                               const std::function<void(std::size_t runs_done)>& runs_done = nullptr);

// The runs of one hardware, in input order.
std::vector<MeasuredRun> runs_on(const std::vector<MeasuredRun>& runs, const std::string& hardware);

// The hardware descriptors the runs name, each once, in first-seen order, and
// every shipped descriptor of their families after them (what
// with_measured_bands takes: a family's calibration serves all its instances,
// so its shares must lie in each one's band, trn1n's EFA as trn1's).
std::vector<spec::HardwareSpec> hardware_of(const std::vector<MeasuredRun>& runs);

// A stack's own in-sample fit on its timed runs of one family in `v`, with the
// family's parameters (bands included), as `calibrate fit --stack` fits
// data/calibration/<family>+<stack>.json; nullopt with fewer than `min_runs`
// runs. `runs` receives their count either way.
std::optional<spec::Calibration> stack_fit(const ValidationResult& v, const FamilyFit& family, const std::string& stack,
                                           int min_runs, int& runs);

// Every stack's own fit on each family where it has `min_runs` timed runs, in
// the family order of `v.fits` and stack-name order within a family.
struct StackFit {
  std::string family, stack;
  int runs = 0;
  spec::Calibration calibration;
};
std::vector<StackFit> own_stack_fits(const ValidationResult& v, int min_runs = kOwnStackFitRuns);

}  // namespace trainplan::validate
