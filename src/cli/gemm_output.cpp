#include "cli/gemm_output.h"

#include "report/columns.h"
#include "report/number_format.h"

namespace trainplan::cli {
namespace {

using report::Column;
using report::text_column;
using report::count_column;
using report::share_column;
using report::measure_column;
using report::NumberStyle;

Column figure(const std::string& header, int decimals, const std::string& key) {
  return {header, "", NumberStyle::fixed, decimals, report::Align::automatic, key};
}

const char* kErrorNote = "error = |model time / measured time - 1|; held out: the curve refitted without that shape "
                         "(every row of it), then asked for it";

}  // namespace

report::Table gemm_timings_table(const calib::GemmFit& fit, const std::string& file) {
  report::Table t;
  t.key = "gemm_timings";
  t.title = "GEMM timings and the fitted shape-efficiency curve";
  t.columns = {text_column("GEMM", "label"),
               count_column("m", "m"),
               count_column("n", "n"),
               count_column("k", "k"),
               measure_column("time", "s", "time_s"),
               measure_column("achieved", "FLOP/s", "achieved_flops_per_s"),
               share_column("efficiency", "efficiency"),
               share_column("model efficiency", "model_efficiency"),
               share_column("error in fit", "error_in_fit"),
               share_column("error held out", "error_held_out"),
               text_column("from", "from")};
  for (const calib::GemmShapeFit& s : fit.shapes) {
    const calib::GemmTiming& g = s.timing;
    t.add_row({g.label, g.m, g.n, g.k, g.seconds, g.flops() / g.seconds, s.efficiency, s.model_efficiency,
               s.error_in_fit, s.error_held_out, file + ":" + std::to_string(g.line)});
  }
  t.notes.push_back("C (m x n) = A (m x k) * B (k x n), 2mnk FLOPs; efficiency = achieved / peak (table "
                    "gemm_fit); model: ceiling * m/(m+m_half) * n/(n+n_half) * k/(k+k_half)");
  t.notes.push_back(kErrorNote);
  return t;
}

report::Table gemm_fit_table(const calib::GemmFit& fit, const std::string& dtype, const std::string& device,
                             const calib::GemmPeak& peak) {
  report::Table t;
  t.key = "gemm_fit";
  t.title = "GEMM efficiency fitted for " + device;
  t.columns = {text_column("dtype", "dtype"),        count_column("shapes", "shapes"),   figure("ceiling", 3, "ceiling"),
               figure("m_half", 1, "m_half"), figure("n_half", 1, "n_half"), figure("k_half", 1, "k_half"),
               measure_column("peak", "FLOP/s", "peak_flops_per_s"), text_column("peak from", "peak_from")};
  const spec::GemmEfficiency& g = fit.efficiency;
  t.add_row({dtype, double(fit.distinct_shapes), g.ceiling, g.m_half, g.n_half, g.k_half, peak.flops_per_s,
             std::string(peak.measured ? "measured" : "hardware descriptor")});
  t.notes.push_back("peak: " + report::format_human(peak.flops_per_s, NumberStyle::engineering, 3, "FLOP/s") +
                    " from " + peak.source);
  t.notes.push_back("fitted on every row: damped Gauss-Newton on log-efficiency, as `calibrate kernels` fits its "
                    "CPU GEMMs (src/calib/fit.cpp)");
  return t;
}

report::Table gemm_check_table(const calib::GemmFit& fit, const std::string& dtype, const std::string& device) {
  report::Table t;
  t.key = "gemm_check";
  t.title = "GEMM curve error on shapes left out of the fit";
  t.columns = {text_column("timings", "timings"), count_column("shapes", "shapes"),
               share_column("median error held out", "median_error_held_out"),
               share_column("max error held out", "max_error_held_out"), share_column("median error in fit", "median_error_in_fit")};
  t.add_row({dtype + " GEMMs on " + device, double(fit.distinct_shapes), fit.median_held_out, fit.max_held_out,
             fit.median_in_fit});
  t.notes.push_back(std::string(kErrorNote) + " (leave one shape out)");
  return t;
}

}  // namespace trainplan::cli
