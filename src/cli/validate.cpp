// `trainplan validate` and `trainplan calibrate fit`: the step model against published
// runs (data/measured/), and the per-accelerator calibration fitted on them.
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <map>
#include <memory>
#include <set>

#include "spec/calibration_io.h"
#include "cli/commands.h"
#include "cli/query.h"
#include "app/published_choices.h"
#include "cli/search_flags.h"
#include "report/table_render.h"
#include "report/validation_report.h"
#include "report/validation_tables.h"
#include "spec/error.h"
#include "spec/error_bands.h"
#include "spec/load.h"
#include "validate/error_bands.h"
#include "validate/validation.h"

namespace tp::cli {
namespace {

std::string default_measured_dir() { return (std::filesystem::path(spec::data_root()) / "data" / "measured").string(); }
std::string default_choices_dir() {
  return (std::filesystem::path(spec::data_root()) / "data" / "published-choices").string();
}

// The shapes every fit starts from: the assumed defaults of spec::Calibration.
// No kernel-measured curve exists for Gaudi or Trainium on this host, so the
// GEMM half-saturation sizes and memory curves stay assumed; only the factors
// named in the fit move.
spec::Calibration starting_calibration() {
  spec::Calibration c;
  c.origin = "fitted";
  return c;
}

struct ValidateOptions {
  report::JsonDocument document;
  std::string measured;
  std::string choices;  // published best layouts; default data/published-choices
  std::string report;  // markdown file; plots beside it
  bool plot = false;
  std::string format = "text";
  std::string hold_out = "both";  // run, source or both
  std::string stack;              // only the runs of this stack
  std::string error_bands;        // write the held-out error bands here
};

// The share of runs each band holds between its low and high ends.
constexpr double kErrorBandCoverage = 0.8;

int run_validate(const ValidateOptions& o) {
  check_output_path(o.report, "--report");
  check_output_path(o.error_bands, "--write-error-bands");
  const std::string dir = o.measured.empty() ? default_measured_dir() : o.measured;
  auto runs = validate::load_measured_dir(dir);
  if (!o.stack.empty()) {
    const std::string name = spec::load_stack(o.stack).name;  // a path or a name, checked
    std::erase_if(runs, [&](const validate::MeasuredRun& r) { return r.stack != name; });
    if (runs.empty()) throw spec::SpecError(dir, "stack", "at least one measured run under stack " + name);
  }
  const spec::Calibration start = starting_calibration();
  const validate::ValidationResult v =
      validate::validate_runs(runs, start, validate::default_fit_parameters(), o.hold_out != "source");
  const report::Table choices = app::choices_table(
      app::check_published_choices(validate::load_published_choices(o.choices.empty() ? default_choices_dir() : o.choices), v));
  const spec::ErrorBands bands = validate::error_bands(
      v, kErrorBandCoverage,
      std::to_string(v.overall.timed_runs) + " timed and " + std::to_string(v.overall.memory_runs) +
          " memory runs of " + (o.measured.empty() ? std::string("data/measured") : o.measured) +
          (o.stack.empty() ? std::string() : " (stack " + o.stack + " only)") +
          "; throughput predicted with each run's source left out of the fit");
  std::vector<report::Table> tables = {report::group_table(v.by_source, "source"), report::group_table(v.by_stack, "stack"),
                                       report::group_table(v.by_family, "accelerator family"), report::as_priced_table(v),
                                       report::group_table(v.by_kind, "kind of run"),
                                       report::mape_table(v), report::fit_table(v), report::band_table(v), report::memory_table(v),
                                       report::error_bands_table(bands, validate::held_out_fit_verdicts(v, kErrorBandCoverage)),
                                       report::unexpressed_table(v), choices, report::runs_table(v)};
  report::render_tables(std::cout, tables, o.format, o.document);
  std::vector<std::string> plots, errors;
  if (o.plot) {
    const std::string plot_dir = o.report.empty() ? "reports" : std::filesystem::path(o.report).parent_path().string();
    plots = report::write_validation_plots(v, plot_dir.empty() ? "." : plot_dir, errors);
    for (const auto& e : errors) std::cerr << "trainplan: plot failed: " << e << "\n";
  }
  if (!o.report.empty())
    report::write_validation_markdown(v, validate::own_stack_fits(v), tables, plots, o.report,
                                      o.measured.empty() ? "data/measured" : o.measured);
  if (!o.error_bands.empty()) {
    spec::save_error_bands(bands, o.error_bands);
    std::cerr << "trainplan: wrote " << o.error_bands << "\n";
  }
  return errors.empty() ? 0 : 1;
}

struct FitOptions {
  std::string measured, hardware, stack, out;
};

nlohmann::json pinned_json(const std::vector<validate::PinnedParameter>& pinned) {
  nlohmann::json out = nlohmann::json::array();
  for (const auto& p : pinned)
    out.push_back({{"name", p.name}, {"band_low", p.low}, {"band_high", p.high}, {"value", p.value},
                   {"band_source", p.band_source}, {"runs_pulling_it_out", p.pulling_runs}});
  return out;
}

int run_fit(const FitOptions& o) {
  check_output_path(o.out, "--out");
  const std::string dir = o.measured.empty() ? default_measured_dir() : o.measured;
  const auto hardware = spec::load_hardware(o.hardware);
  std::vector<validate::MeasuredRun> runs;
  for (const auto& r : validate::load_measured_dir(dir))
    if (spec::load_hardware(r.hardware).family == hardware.family && (o.stack.empty() || r.stack == o.stack))
      runs.push_back(r);
  if (runs.empty()) {
    std::cerr << "trainplan: no measured run on the " << hardware.family << " family"
              << (o.stack.empty() ? std::string() : " under " + o.stack) << " in " << dir << "\n";
    return 2;
  }
  spec::Calibration start = starting_calibration();
  start.accelerator = hardware.accelerator;
  validate::Predictor predictor(runs, start);
  const auto parameters = validate::with_measured_bands(validate::default_fit_parameters(), validate::hardware_of(runs));
  const validate::FitResult fit = validate::fit(predictor, parameters);
  spec::CalibrationFile file;
  file.calibration = fit.calibration;
  file.calibration.name = hardware.family + (o.stack.empty() ? "" : "+" + o.stack) + "-fitted";
  file.calibration.description = "fitted by `trainplan calibrate fit` on " + std::to_string(fit.fitted_on.size()) +
                                 " published runs of the " + hardware.family + " family" +
                                 (o.stack.empty() ? std::string(" (all stacks)") : " under " + o.stack) + " (" +
                                 (o.measured.empty() ? std::string("data/measured") : o.measured) +
                                 "); GEMM, memory and intra-instance shapes are the assumed defaults";
  file.extra["fitted_on"] = fit.fitted_on;
  nlohmann::json params = nlohmann::json::array();
  for (size_t k = 0; k < parameters.size(); ++k) {
    const bool fitted = std::find(fit.unfitted.begin(), fit.unfitted.end(), parameters[k].name) == fit.unfitted.end();
    params.push_back({{"name", parameters[k].name}, {"value", fit.values[k]}, {"fitted", fitted},
                      {"lower", parameters[k].lower}, {"upper", parameters[k].upper},
                      {"prior_centre", parameters[k].prior_centre}, {"prior_sigma", parameters[k].prior_sigma},
                      {"meaning", parameters[k].meaning}});
  }
  file.extra["fit"] = {{"method", std::string("Levenberg-Marquardt on log(predicted/measured seq/s), numeric derivatives, logistic bounds, ") +
                                  "Gaussian prior per parameter (MAP) with runs weighted by an assumed " +
                                  std::to_string(int(validate::kRunNoiseLog * 100)) + "% scatter"},
                       {"parameters", params},
                       {"held_at_band_edge", pinned_json(fit.pinned)},
                       {"rms_log_error", fit.rms_log_error},
                       {"residual_degrees_of_freedom", fit.residual_dof}};
  const bool replaces = std::filesystem::exists(o.out);
  spec::save_calibration(file, o.out);
  if (replaces) std::cout << "replaced " << o.out << "\n";
  for (size_t k = 0; k < parameters.size(); ++k)
    std::cout << parameters[k].name << " = " << fit.values[k]
              << (std::find(fit.unfitted.begin(), fit.unfitted.end(), parameters[k].name) == fit.unfitted.end()
                      ? ""
                      : " (not fitted: no run depends on it)")
              << "\n";
  for (const auto& pin : fit.pinned) {
    std::cout << pin.name << " held at the edge of its measured band " << pin.low << "-" << pin.high << "; runs pulling it out:";
    for (const auto& id : pin.pulling_runs) std::cout << " " << id;
    std::cout << "\n";
  }
  std::cout << "rms log error " << fit.rms_log_error << " over " << fit.fitted_on.size() << " runs; wrote " << o.out << "\n";
  return 0;
}

}  // namespace

void add_validate_command(CLI::App& app) {
  auto o = std::make_shared<ValidateOptions>();
  CLI::App* c = app.add_subcommand("validate", "The step model against measured runs: in-sample and leave-one-out errors");
  c->add_option("--measured", o->measured, "Folder of measured-run JSON files; default data/measured");
  c->add_option("--choices", o->choices,
                "Folder of published best-layout JSON files, ranked by the search under the fit; default data/published-choices");
  c->add_flag("--plot", o->plot, "Write predicted-against-measured and scaling plots beside the report (default reports/)");
  c->add_option("--report", o->report, "Also write the markdown report here, e.g. reports/validation.md");
  c->add_option("--stack", o->stack, "Validate only the runs of this stack (a stacks/ name or file)");
  c->add_option("--write-error-bands", o->error_bands,
                "Also write the held-out error bands (the central 80% of the errors, throughput per accelerator family "
                "and memory) that estimate puts on its figures; the shipped file is data/error-bands.json");
  c->add_option("--hold-out", o->hold_out,
                "What each held-out prediction leaves out: source (fit on every other source, predict this one's runs), "
                "run (also refit once per run; slower), or both")
      ->capture_default_str()
      ->check(CLI::IsMember({"run", "source", "both"}));
  c->add_option("-f,--format", o->format, "Terminal output: text, markdown, csv or json")
      ->capture_default_str()
      ->check(CLI::IsMember({"text", "markdown", "csv", "json"}));
  c->callback([o, c] {
    o->document = json_document(*c);
    if (const int code = run_validate(*o)) throw CLI::RuntimeError(code);
  });
}

void add_fit_command(CLI::App& app) {
  auto o = std::make_shared<FitOptions>();
  CLI::App* c = app.add_subcommand("fit", "Fit an accelerator's calibration factors to measured runs");
  c->add_option("--measured", o->measured, "Folder of measured-run JSON files; default data/measured");
  c->add_option("-H,--hardware", o->hardware, "Instance type: the runs of its accelerator family are fitted")->required();
  c->add_option("--stack", o->stack, "Fit only the runs of this stack (default: every stack on the family)");
  c->add_option("--out", o->out,
                "Calibration file to write: data/calibration/<hardware or family>+<stack>.json is looked up first")
      ->required();
  c->callback([o] {
    if (const int code = run_fit(*o)) throw CLI::RuntimeError(code);
  });
}

}  // namespace tp::cli
