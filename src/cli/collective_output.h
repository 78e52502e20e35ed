// What `calibrate collectives` and `calibrate import` share once they hold
// collective runs: the base calibration, the fit, the file written
// (spec::save_calibration) and the tables printed through report::render_tables
// under fixed keys: collective_runs, collective_fit, collective_check.
#pragma once
#include <CLI/CLI.hpp>
#include <string>
#include <vector>

#include "calib/collective_calibration.h"
#include "calib/collective_fit.h"
#include "calib/collective_run.h"
#include "net/cluster.h"
#include "report/json_document.h"
#include "report/table.h"
#include "spec/calibration_io.h"
#include "spec/hardware_spec.h"

namespace trainplan::cli {

struct CollectiveOutput {
  std::string out;     // calibration file to write
  std::string name;    // calibration name; empty: <hardware>-collectives-<date> (-gemm- for GEMM timings)
  std::string base;    // calibration whose other parts are kept; empty: what estimate would use
  std::string format = "text";
  report::JsonDocument document;
};

// --out (required), --base (its help ends with `base_default`), --name (its default `name_default`)
// and -f/--format.
void add_output_options(CLI::App* command, CollectiveOutput& output, const std::string& base_default,
                        const std::string& name_default = "<hardware>-collectives-<date>");

// --base, else the calibration `estimate` would use for `hardware` (its default stack), else the
// built-in default; the second member names it.
std::pair<spec::CalibrationFile, std::string> base_calibration(const std::string& base, const spec::HardwareSpec& hw);

// Fits, writes the calibration, prints the tables. `stored` is written to find the hardware again.
void fit_and_write(const std::vector<calib::CollectiveRun>& runs, const spec::HardwareSpec& hardware,
                   const calib::CollectiveHardware& stored, const std::string& how, const CollectiveOutput& output);

std::string today_iso();

}  // namespace trainplan::cli
