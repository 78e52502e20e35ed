#include "cli/import_gemm.h"

#include <cstdlib>
#include <iostream>

#include "calib/cpu_name.h"
#include "calib/gemm_calibration.h"
#include "calib/log_fields.h"
#include "cli/gemm_output.h"
#include "report/table_render.h"
#include "spec/error.h"
#include "spec/load.h"

namespace trainplan::cli {
namespace {

// The threads the CPU timings used: --threads, else the file's "# threads: N".
int timing_threads(const GemmImportOptions& o, const calib::GemmCsv& csv) {
  if (o.threads > 0) return o.threads;
  const auto it = csv.meta.find("threads");
  if (it == csv.meta.end())
    throw spec::SpecError(csv.file, "threads",
                          "the number of CPU threads the timings used, to measure the FMA peak over the same: a "
                          "'# threads: N' line (tools/measure_gemm.py writes one) or --threads N");
  if (!calib::is_whole_token(it->second) || std::stoll(it->second) < 1 || std::stoll(it->second) > 1024)
    throw spec::SpecError(csv.file, "# threads", "a whole number from 1 to 1024, got " + calib::log_excerpt(it->second));
  return int(std::stoll(it->second));
}

// Timings and the peak must describe the same machine: refuse a CPU file against a descriptor, an
// accelerator's against this host, and another CPU's against this one.
void check_device(const calib::GemmCsv& csv, bool host) {
  const auto backend = csv.meta.find("backend");
  if (host) {
    if (backend != csv.meta.end() && backend->second != "cpu")
      throw spec::SpecError(csv.file, "# backend",
                            "cpu for --hardware host, got " + backend->second +
                                ": name the instance type the timings ran on with --hardware");
    if (csv.device != calib::cpu_name())
      throw spec::SpecError(csv.file, "device",
                            "this host's CPU (" + calib::cpu_name() + ") for --hardware host, got '" + csv.device +
                                "': import CPU timings on the machine that took them, where its peak can be measured");
  } else if (backend != csv.meta.end() && backend->second == "cpu") {
    throw spec::SpecError("--hardware", "", "host for timings taken on a CPU (" + csv.file +
                                                " says '# backend: cpu'): its peak is measured, no descriptor states it");
  }
}

// CPU seconds per wall second while timing (tools/measure_gemm.py's "# cpu_busy:"): well above the threads
// the peak is measured over means a pool (a BLAS's own) ran more, and the efficiencies would come out too high.
void check_cpu_busy(const calib::GemmCsv& csv, int threads) {
  const auto it = csv.meta.find("cpu_busy");
  if (it == csv.meta.end()) return;
  char* end = nullptr;
  const double busy = std::strtod(it->second.c_str(), &end);
  if (it->second.empty() || *end != '\0' || !(busy >= 0) || busy > 1e6)
    throw spec::SpecError(csv.file, "# cpu_busy", "a number of CPUs, got " + calib::log_excerpt(it->second));
  if (busy > threads + 0.25)
    throw spec::SpecError(csv.file, "# cpu_busy",
                          "about the " + std::to_string(threads) + " thread(s) the peak is measured over, got " +
                              it->second + " CPUs busy while timing: pass the threads they used as --threads");
}

}  // namespace

void import_gemm(const GemmImportOptions& o) {
  const CollectiveOutput& out = *o.output;  // --out checked by the caller, before any work
  const calib::GemmCsv csv = calib::read_gemm_csv(o.csv);
  const std::vector<calib::GemmTiming> rows = calib::rows_of_dtype(csv, o.dtype);
  const bool host = o.hardware == "host";
  check_device(csv, host);
  if (!out.base.empty()) spec::load_calibration(out.base);  // refused before measuring

  calib::GemmProvenance p;
  p.how = "imported by `trainplan calibrate import --gemm` from " + o.csv;
  p.date = today_iso();
  p.hardware = o.hardware;
  p.dtype = rows.front().dtype;
  spec::HardwareSpec hardware;
  if (host) {
    const int threads = timing_threads(o, csv);
    check_cpu_busy(csv, threads);
    const calib::HostPeaks h = calib::measure_host_peaks(threads);
    if (h.threads != threads)
      throw spec::SpecError(csv.file, "threads",
                            std::to_string(threads) + " threads, more than this host's " + std::to_string(h.threads) +
                                ": the timings cannot have used them here");
    p.peak = h.peak;
    p.accelerator = "host CPU (" + h.cpu + ")";
    p.host = h;
    hardware.name = "host";
  } else {
    hardware = spec::load_hardware(o.hardware);
    p.peak = calib::descriptor_peak(hardware, p.dtype);
    p.accelerator = hardware.accelerator;
  }
  const auto [base, base_name] = base_calibration(out.base, hardware);
  p.base = base_name;
  const calib::GemmFit fit = calib::fit_gemm_timings(rows, p.peak.flops_per_s, o.csv);
  const std::string name = out.name.empty() ? hardware.name + "-gemm-" + p.date : out.name;
  const spec::CalibrationFile file = calib::gemm_calibration(base, csv, rows, fit, p, name);
  spec::save_calibration(file, out.out);

  report::Table fitted = gemm_fit_table(fit, p.dtype, csv.device, p.peak);
  if (rows.size() < csv.rows.size())
    fitted.notes.push_back(std::to_string(csv.rows.size() - rows.size()) + " rows of other dtypes left out (--dtype " +
                           p.dtype + ")");
  for (const std::string& column : csv.skipped_columns) fitted.notes.push_back("column '" + column + "' not read");
  fitted.notes.push_back("other parts of the calibration from " + base_name + "; wrote " + out.out);
  const std::vector<report::Table> tables = {gemm_timings_table(fit, o.csv), fitted,
                                             gemm_check_table(fit, p.dtype, csv.device)};
  report::render_tables(std::cout, tables, out.format, out.document);
}

}  // namespace trainplan::cli
