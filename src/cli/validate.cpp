// `trainplan validate`: the step model against published runs (data/measured/), in
// sample and held out, and the error bands the held-out errors give (fit: cli/fit.cpp).
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <map>
#include <memory>
#include <set>

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

CommandOutput run_validate(const ValidateOptions& o, std::ostream& notes) {
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
  std::vector<std::string> plots, errors;
  if (o.plot) {
    const std::string plot_dir = o.report.empty() ? "reports" : std::filesystem::path(o.report).parent_path().string();
    plots = report::write_validation_plots(v, plot_dir.empty() ? "." : plot_dir, errors);
    for (const auto& e : errors) notes << "trainplan: plot failed: " << e << "\n";
  }
  if (!o.report.empty())
    report::write_validation_markdown(v, validate::own_stack_fits(v), tables, plots, o.report,
                                      o.measured.empty() ? "data/measured" : o.measured);
  if (!o.error_bands.empty()) {
    spec::save_error_bands(out.bands, o.error_bands);
    notes << "trainplan: wrote " << o.error_bands << "\n";
  }
  return {.exit_code = errors.empty() ? 0 : 1, .format = o.format, .head = o.document, .made = std::move(tables)};
}

}  // namespace

SharedCommand add_validate_command(CLI::App& app) {
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
  return {c, [o, c](std::ostream& notes) {
            o->document = json_document(*c);
            return run_validate(*o, notes);
          }};
}

}  // namespace trainplan::cli
