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
#include "cli/output_paths.h"
#include "cli/query.h"
#include "app/validation.h"
#include "report/progress.h"
#include "report/table_render.h"
#include "report/validation_report.h"
#include "report/validation_tables.h"
#include "spec/error.h"
#include "spec/error_bands.h"
#include "spec/load.h"
#include "validate/error_bands.h"
#include "validate/validation.h"

namespace trainplan::cli {
namespace {

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
  bool quiet = false;
};

int run_validate(const ValidateOptions& o) {
  check_output_path(o.report, "--report");
  check_output_path(o.error_bands, "--write-error-bands");
  app::ValidationQuery query{o.measured, o.choices, o.stack, o.hold_out != "source"};
  query.progress = report::progress_reporter(std::cerr, report::ProgressOptions::for_stderr(o.quiet, "validate"));
  const app::ValidationOutcome out = app::run_validation(query);
  const validate::ValidationResult& v = out.result;
  std::vector<report::Table> tables = {report::group_table(v.by_source, "source"), report::group_table(v.by_stack, "stack"),
                                       report::group_table(v.by_family, "accelerator family"), report::as_priced_table(v),
                                       report::group_table(v.by_kind, "kind of run"),
                                       report::mape_table(v), report::fit_table(v), report::band_table(v), report::memory_table(v),
                                       report::error_bands_table(out.bands, validate::held_out_fit_verdicts(v, app::kErrorBandCoverage)),
                                       report::unexpressed_table(v), app::choices_table(out.choices), report::runs_table(v)};
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
    spec::save_error_bands(out.bands, o.error_bands);
    std::cerr << "trainplan: wrote " << o.error_bands << "\n";
  }
  return errors.empty() ? 0 : 1;
}

struct FitOptions {
  std::string measured, hardware, stack, out;
};

int run_fit(const FitOptions& o) {
  check_output_path(o.out, "--out");
  const app::FitOutcome out = app::fit_calibration({o.measured, o.hardware, o.stack});
  if (out.runs == 0) {
    std::cerr << "trainplan: no measured run on the " << out.family << " family"
              << (o.stack.empty() ? std::string() : " under " + o.stack) << " in "
              << (o.measured.empty() ? app::default_measured_dir() : o.measured) << "\n";
    return 2;
  }
  const std::vector<validate::FitParameter>& parameters = out.parameters;
  const validate::FitResult& fit = out.fit;
  const bool replaces = std::filesystem::exists(o.out);
  spec::save_calibration(out.file, o.out);
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
  c->add_flag("-q,--quiet", o->quiet, "No progress bar");
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

}  // namespace trainplan::cli
