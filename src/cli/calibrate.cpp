// `trainplan calibrate`: its subcommands registered (kernels, collectives, import)
// and `calibrate check`, which predicts the measurements a calibration file holds
// but did not fit.
#include <cstdio>
#include <iostream>
#include <nlohmann/json.hpp>

#include "calib/collective_calibration.h"
#include "calib/fit.h"
#include "calib/gemm_calibration.h"
#include "cli/calibrate_collectives.h"
#include "cli/calibrate_kernels.h"
#include "cli/collective_tables.h"
#include "cli/commands.h"
#include "cli/gemm_output.h"
#include "net/cluster.h"
#include "report/table_render.h"
#include "spec/calibration_io.h"

namespace trainplan::cli {

void add_calibrate_command(CLI::App& app) {
  auto* cmd = app.add_subcommand(
      "calibrate",
      "Measure this host's BF16 kernels and fit the efficiency model the cost model reads\n"
      "(GEMM efficiency by shape, memory-bound ops by size, attention factors forward and backward);\n"
      "time collectives over MPI or import vendor benchmark logs for the collective part (share of\n"
      "link bandwidth, step latency);\n"
      "import GEMM timings from your accelerator (tools/measure_gemm.py) for the GEMM curve.");
  cmd->require_subcommand(1);

  add_kernels_command(*cmd);  // trainplan calibrate kernels

  auto* check = cmd->add_subcommand(
      "check",
      "Predict the measurements a calibration file holds but did not fit (every fourth grid point)\n"
      "and print the relative error per op kind; for imported GEMM timings, each shape predicted by\n"
      "the curve refitted on the others (leave one shape out); for measured or imported collectives,\n"
      "each size predicted by a fit on the others (leave one size out), per run.\n"
      "Example:  trainplan calibrate check data/calibration/host-quick.json host-quick-onednn.json");
  auto files = std::make_shared<std::vector<std::string>>();
  auto all = std::make_shared<bool>(false);
  check->add_option("FILE", *files,
                    "Calibration file(s) written by `calibrate kernels`, `collectives` or `import`; several\n"
                    "(e.g. one per --backend) are checked one after the other")
      ->required();
  check->add_flag("--all", *all, "Also include the points the fit saw (and list every imported GEMM)");
  check->callback([=] {
    for (const std::string& file : *files) {
      const spec::CalibrationFile calibration = spec::load_calibration(file);
      const bool collectives = calib::has_collectives(calibration), gemm = calib::has_gemm_timings(calibration);
      const nlohmann::json& x = *calibration.extra;
      if (x.contains("measurements") && x.contains("host") && x["host"].is_object()) {
        const auto& host = x["host"];
        const std::string backend = host.contains("gemm_backend") && host["gemm_backend"].is_string()
                                        ? host["gemm_backend"].get<std::string>()
                                        : "own";
        std::printf("%s: kernels %s, GEMM backend %s\n", file.c_str(),
                    host.contains("isa") && host["isa"].is_string() ? host["isa"].get<std::string>().c_str() : "?",
                    backend.c_str());
      } else if (files->size() > 1) {
        std::printf("%s:\n", file.c_str());
      }
      // Kernels, or (with nothing else measured) the refusal saying what is missing.
      if ((!collectives && !gemm) || x.contains("measurements")) print_check(calib::check_calibration(calibration, *all));
      if (gemm) {
        const calib::StoredGemm stored = calib::stored_gemm_timings(calibration, file);
        const calib::GemmFit fit = calib::fit_gemm_timings(stored.rows, stored.peak_flops_per_s, file);
        if (*all) report::render_table(std::cout, gemm_timings_table(fit, file), report::Format::text);
        report::Table table = gemm_check_table(fit, stored.dtype, stored.device);
        table.notes.push_back("efficiency against " + stored.peak_source);
        report::render_table(std::cout, table, report::Format::text);
      }
      if (collectives) {
        const calib::StoredCollectives stored = calib::stored_collectives(calibration, file);
        const net::Cluster cluster(stored.hardware);
        report::render_table(std::cout, check_table(calib::check_collectives(stored.runs, cluster, stored.start)),
                             report::Format::text);
      }
    }
  });

  add_collectives_command(*cmd);  // trainplan calibrate collectives (MPI)
  add_import_command(*cmd);       // trainplan calibrate import --collectives (vendor logs)
}

}  // namespace trainplan::cli
