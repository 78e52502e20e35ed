#include "cli/collective_output.h"

#include <cmath>
#include <ctime>
#include <iostream>

#include "calib/bus_bandwidth.h"
#include "calib/collective_calibration.h"
#include "cli/collective_tables.h"
#include "report/number_format.h"
#include "report/table_render.h"
#include "spec/calibration_lookup.h"

namespace trainplan::cli {

void add_output_options(CLI::App* c, CollectiveOutput& o, const std::string& base_default,
                        const std::string& name_default) {
  c->add_option("--out", o.out, "Calibration file to write (JSON)")->required();
  c->add_option("--base", o.base, "Calibration whose other parts are kept (default: " + base_default + ")");
  c->add_option("--name", o.name, "Calibration name (default: " + name_default + ")");
  c->add_option("-f,--format", o.format, "Output: text, markdown, csv or json")
      ->capture_default_str()
      ->check(CLI::IsMember({"text", "markdown", "csv", "json"}));
}

std::string today_iso() {
  std::time_t t = std::time(nullptr);
  char buf[16];
  std::strftime(buf, sizeof buf, "%Y-%m-%d", std::localtime(&t));
  return buf;
}

std::pair<spec::CalibrationFile, std::string> base_calibration(const std::string& base, const spec::HardwareSpec& hw) {
  if (!base.empty()) return {spec::load_calibration(base), base};
  spec::CalibrationFile file;
  if (hw.name == "host" || hw.default_stack.empty()) {
    file.calibration = spec::assumed_calibration(hw);
    return {file, "built-in default"};
  }
  const spec::CalibrationChoice choice = spec::find_calibration(hw, hw.default_stack);
  file.calibration = choice.calibration;
  return {file, choice.file};
}

void fit_and_write(const std::vector<calib::CollectiveRun>& runs, const spec::HardwareSpec& hardware,
                   const calib::CollectiveHardware& stored, const std::string& how, const CollectiveOutput& o) {
  const auto [base, base_name] = base_calibration(o.base, hardware);
  const net::Cluster cluster(hardware);
  const calib::CollectiveFit fit = calib::fit_collectives(runs, cluster, base.calibration.collective);
  const std::string date = today_iso();
  const calib::CollectiveProvenance provenance{how, date, base_name, stored};
  const std::string name = o.name.empty() ? hardware.name + "-collectives-" + date : o.name;
  const spec::CalibrationFile file = calib::collective_calibration(base, runs, fit, provenance, name);
  spec::save_calibration(file, o.out);
  report::Table fitted = fit_table(fit, hardware.name, base_name);
  if (hardware.name == "host")
    fitted.notes.push_back("host: each rank a device; its link is the memcpy bandwidth each rank reached with all "
                           "copying at once, " + report::format_human(hardware.chip_fabric_bytes_per_s,
                                                                      report::NumberStyle::engineering, 3, "B/s"));
  fitted.notes.push_back("wrote " + o.out);
  const std::vector<report::Table> tables = {runs_table(runs, cluster, fit.efficiency), fitted,
                                             check_table(calib::check_collectives(runs, cluster, base.calibration.collective))};
  report::render_tables(std::cout, tables, o.format, o.document);
}

}  // namespace trainplan::cli
