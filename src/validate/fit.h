// Fitting a few per-accelerator factors of a Calibration to measured runs:
// Levenberg-Marquardt (calib/levenberg_marquardt.h) on log(predicted / measured seq/s) with numeric
// derivatives, every parameter mapped through a logistic onto its bounds so a
// fit can never leave them, and a weak Gaussian prior per parameter (a MAP
// estimate) so a factor the runs cannot pin stays near its assumed value
// instead of drifting to a bound. A job republished by several releases counts
// as one run (job_key). Deterministic: fixed starts and iteration limits.
#pragma once
#include <string>
#include <vector>

#include "spec/calibration.h"
#include "spec/hardware_spec.h"
#include "validate/predictor.h"

namespace trainplan::validate {

struct FitParameter {
  std::string name;  // the Calibration field, as in its JSON: "gemm.ceiling"
  double lower = 0, upper = 1;
  std::string meaning;  // one line, for the calibration file
  // Prior: the assumed value and how far from it the runs may move it freely.
  double prior_centre = 0, prior_sigma = 0;  // sigma 0: no prior
  // The bounds are a band that collective measurements give (with_measured_bands),
  // not a mere range: a fit pressed against them is reported (FitResult::pinned).
  std::string band_source;
  // Whether the band's low edge is measured too; false where a measurement
  // caps the parameter only (the collective library's latency model): a fit
  // resting on the low bound is then not pressing on any measurement.
  bool band_bounds_low = true;
  // Where the prior comes from, where evidence outside the runs sets it (the
  // hardware's host.trace_ms_per_layer); empty: the assumed default.
  std::string prior_source;
};

// A banded parameter the fit holds at its band's edge: the runs would take it
// further. The loss those runs carry is left to the other terms.
struct PinnedParameter {
  std::string name;
  double low = 0, high = 0, value = 0;
  std::string band_source;
  std::vector<std::string> pulling_runs;  // run ids whose error shrinks past the edge, most first (at most 5)
};

// Assumed run-to-run scatter of a published throughput, as a log error. It
// weighs the runs against the priors: a run missed by this much costs as much
// as a parameter one prior sigma from its centre.
inline constexpr double kRunNoiseLog = 0.02;

// The weight of each run in `use` in the fit: a job (job_key) published once
// weighs 1 x (runs / jobs); one republished n times, that shared among its n
// runs. The squared weights sum to the number of runs.
std::vector<double> run_weights(const Predictor& predictor, const std::vector<size_t>& use);

// The default set: GEMM ceiling, attention and memory-bound efficiencies, the
// collective shares and step latency, and the pipeline's per-micro-batch
// hand-off (runs only under stacks that cut a graph there); priors centred on
// the assumed defaults of spec::Calibration.
std::vector<FitParameter> default_fit_parameters();

// The same set with each collective share bounded by the band that its
// fabric's published collective measurements give (spec::ShareBand), prior at
// the band's centre, where every hardware of the family states one (their
// intersection when several do), and the per-step collective latency capped by
// the collective library's own latency model (spec::StepLatencyBand) where every
// hardware of the family states one. Throws spec::SpecError when the shares' bands do not overlap.
std::vector<FitParameter> with_measured_bands(std::vector<FitParameter> parameters,
                                              const std::vector<spec::HardwareSpec>& family_hardware);

// Reads or writes the named field; throws spec::SpecError for an unknown name.
double& parameter_ref(spec::Calibration& calibration, const std::string& name);

struct FitResult {
  spec::Calibration calibration;   // start with the fitted fields replaced
  std::vector<double> values;       // one per parameter, inside its bounds
  std::vector<std::string> fitted_on;  // run ids
  double rms_log_error = 0;         // over the fitted runs
  int iterations = 0;
  int residual_dof = 0;             // runs - fitted parameters
  std::vector<std::string> unfitted;  // parameters no run depends on: they keep their assumed values
  std::vector<PinnedParameter> pinned;  // banded parameters held at an edge of their band
};

// grid: n + 2 fixed starts (deterministic, slower); current: one start at the
// calibration's present values (a warm start, for leave-one-out refits).
enum class FitStart { grid, current };

// Fits on the timed runs whose index is in `use`. With no timed run among
// them, every factor takes its prior centre: nothing is fitted. predictor's
// calibration is left at the fitted values.
FitResult fit(Predictor& predictor, const std::vector<FitParameter>& parameters, const std::vector<size_t>& use,
              FitStart start = FitStart::grid);
// On every timed run of the predictor.
FitResult fit(Predictor& predictor, const std::vector<FitParameter>& parameters);

}  // namespace trainplan::validate
