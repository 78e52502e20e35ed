#include "app/validation.h"

#include <algorithm>
#include <filesystem>
#include <set>
#include <nlohmann/json.hpp>

#include "spec/error.h"
#include "spec/load.h"
#include "validate/error_bands.h"
#include "validate/predictor.h"

namespace trainplan::app {
namespace {

// The shapes every fit starts from: the assumed defaults of spec::Calibration.
// No kernel-measured curve exists for Gaudi or Trainium on this host, so the
// GEMM half-saturation sizes and memory curves stay assumed; only the factors
// named in the fit move.
spec::Calibration starting_calibration() {
  spec::Calibration c;
  c.origin = "fitted";
  return c;
}

nlohmann::json pinned_json(const std::vector<validate::PinnedParameter>& pinned) {
  nlohmann::json out = nlohmann::json::array();
  for (const auto& p : pinned)
    out.push_back({{"name", p.name}, {"band_low", p.low}, {"band_high", p.high}, {"value", p.value},
                   {"band_source", p.band_source}, {"runs_pulling_it_out", p.pulling_runs}});
  return out;
}

}  // namespace

std::string default_measured_dir() { return (std::filesystem::path(spec::data_root()) / "data" / "measured").string(); }
std::string default_choices_dir() {
  return (std::filesystem::path(spec::data_root()) / "data" / "published-choices").string();
}

ValidationOutcome run_validation(const ValidationQuery& q) {
  const std::string dir = q.measured.empty() ? default_measured_dir() : q.measured;
  auto runs = validate::load_measured_dir(dir);
  if (!q.stack.empty()) {
    const std::string name = spec::load_stack(q.stack).name;  // a path or a name, checked
    std::erase_if(runs, [&](const validate::MeasuredRun& r) { return r.stack != name; });
    if (runs.empty()) throw spec::SpecError(dir, "stack", "at least one measured run under stack " + name);
  }
  ValidationOutcome out;
  std::function<void(std::size_t)> runs_done;
  const auto in_use = std::size_t(
      std::count_if(runs.begin(), runs.end(), [](const validate::MeasuredRun& r) { return r.in_use(); }));
  if (q.progress) runs_done = [&](std::size_t done) { q.progress(done, in_use); };
  out.result = validate::validate_runs(runs, starting_calibration(), validate::default_fit_parameters(),
                                       q.leave_one_run_out, runs_done);
  out.choices = check_published_choices(
      validate::load_published_choices(q.choices.empty() ? default_choices_dir() : q.choices), out.result);
  out.bands = validate::error_bands(
      out.result, kErrorBandCoverage,
      std::to_string(out.result.overall.timed_runs) + " timed and " + std::to_string(out.result.overall.memory_runs) +
          " memory runs of " + (q.measured.empty() ? std::string("data/measured") : q.measured) +
          (q.stack.empty() ? std::string() : " (stack " + q.stack + " only)") +
          "; throughput predicted with each run's source left out of the fit, by the calibration estimate would "
          "have found (its stack's or a base stack's fit on other sources, else the family's)");
  return out;
}

FitOutcome fit_calibration(const FitQuery& o) {
  FitOutcome out;
  const std::string dir = o.measured.empty() ? default_measured_dir() : o.measured;
  const auto hardware = spec::load_hardware(o.hardware);
  out.family = hardware.family;
  std::vector<validate::MeasuredRun> runs;
  for (const auto& r : validate::load_measured_dir(dir))
    if (r.in_use() && spec::load_hardware(r.hardware).family == hardware.family &&
        (o.stack.empty() || r.stack == o.stack))
      runs.push_back(r);
  out.runs = int(runs.size());
  if (runs.empty()) return out;
  spec::Calibration start = starting_calibration();
  start.accelerator = hardware.accelerator;
  validate::Predictor predictor(runs, start);
  out.parameters = validate::with_measured_bands(validate::default_fit_parameters(), validate::hardware_of(runs));
  const std::vector<validate::FitParameter>& parameters = out.parameters;
  out.fit = validate::fit(predictor, parameters);
  const validate::FitResult& fit = out.fit;
  spec::CalibrationFile& file = out.file;
  file.calibration = fit.calibration;
  file.calibration.name = hardware.family + (o.stack.empty() ? "" : "+" + o.stack) + "-fitted";
  // A family-wide file names the stacks its runs ran under: where every one is a
  // fine-tuning stack, a user pricing another stack on that family should know.
  std::set<std::string> stacks;
  for (const auto& r : runs)
    if (std::find(fit.fitted_on.begin(), fit.fitted_on.end(), r.id) != fit.fitted_on.end()) stacks.insert(r.stack);
  std::string stack_list;
  for (const std::string& s : stacks) stack_list += (stack_list.empty() ? "" : ", ") + s;
  file.calibration.description = "fitted by `trainplan calibrate fit` on " + std::to_string(fit.fitted_on.size()) +
                                 " published runs of the " + hardware.family + " family" +
                                 (o.stack.empty() ? " (stacks " + stack_list + ")" : " under " + o.stack) + " (" +
                                 (o.measured.empty() ? std::string("data/measured") : o.measured) +
                                 "); GEMM, memory and intra-instance shapes are the assumed defaults";
  (*file.extra)["fitted_on"] = fit.fitted_on;
  nlohmann::json params = nlohmann::json::array();
  for (size_t k = 0; k < parameters.size(); ++k) {
    const bool fitted = std::find(fit.unfitted.begin(), fit.unfitted.end(), parameters[k].name) == fit.unfitted.end();
    params.push_back({{"name", parameters[k].name}, {"value", fit.values[k]}, {"fitted", fitted},
                      {"lower", parameters[k].lower}, {"upper", parameters[k].upper},
                      {"prior_centre", parameters[k].prior_centre}, {"prior_sigma", parameters[k].prior_sigma},
                      {"meaning", parameters[k].meaning}});
    if (!parameters[k].prior_source.empty()) params.back()["prior_source"] = parameters[k].prior_source;
  }
  (*file.extra)["fit"] = {{"method", std::string("Levenberg-Marquardt on log(predicted/measured seq/s), numeric derivatives, logistic bounds, ") +
                                  "Gaussian prior per parameter (MAP) with runs weighted by an assumed " +
                                  std::to_string(int(validate::kRunNoiseLog * 100)) +
                                  "% scatter, each job counted once however many releases republished it"},
                       {"parameters", params},
                       {"held_at_band_edge", pinned_json(fit.pinned)},
                       {"rms_log_error", fit.rms_log_error},
                       {"residual_degrees_of_freedom", fit.residual_dof}};
  return out;
}

}  // namespace trainplan::app
