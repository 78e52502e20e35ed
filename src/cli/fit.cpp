// `trainplan calibrate fit`: an accelerator's calibration factors fitted to the
// published runs of its family (data/measured/), written as a calibration file.
#include <algorithm>
#include <filesystem>
#include <iostream>
#include <memory>

#include "app/validation.h"
#include "cli/commands.h"
#include "cli/output_paths.h"
#include "spec/calibration_io.h"

namespace trainplan::cli {
namespace {

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
