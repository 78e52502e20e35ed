#include "cli/gemm_output.h"

#include "report/number_format.h"

namespace tp::cli {
namespace {

using report::Column;
using report::NumberStyle;

Column text(const std::string& header, const std::string& key) {
  return {header, "", NumberStyle::fixed, 0, report::Align::automatic, key};
}
Column whole(const std::string& header, const std::string& key) {
  return {header, "", NumberStyle::integer, 0, report::Align::automatic, key};
}
Column share(const std::string& header, const std::string& key) {
  return {header, "", NumberStyle::percent, 1, report::Align::automatic, key};
}
Column figure(const std::string& header, int decimals, const std::string& key) {
  return {header, "", NumberStyle::fixed, decimals, report::Align::automatic, key};
}
Column measure(const std::string& header, const std::string& unit, const std::string& key) {
  return {header, unit, NumberStyle::engineering, 3, report::Align::automatic, key};
}

const char* kErrorNote = "error = |model time / measured time - 1|; held out: the curve refitted without that shape "
                         "(every row of it), then asked for it";

}  // namespace

report::Table gemm_timings_table(const calib::GemmFit& fit, const std::string& file) {
  report::Table t;
  t.key = "gemm_timings";
  t.title = "GEMM timings and the fitted shape-efficiency curve";
  t.columns = {text("GEMM", "label"),
               whole("m", "m"),
               whole("n", "n"),
               whole("k", "k"),
               measure("time", "s", "time_s"),
               measure("achieved", "FLOP/s", "achieved_flops_per_s"),
               share("efficiency", "efficiency"),
               share("model efficiency", "model_efficiency"),
               share("error in fit", "error_in_fit"),
               share("error held out", "error_held_out"),
               text("from", "from")};
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
  t.columns = {text("dtype", "dtype"),        whole("shapes", "shapes"),   figure("ceiling", 3, "ceiling"),
               figure("m_half", 1, "m_half"), figure("n_half", 1, "n_half"), figure("k_half", 1, "k_half"),
               measure("peak", "FLOP/s", "peak_flops_per_s"), text("peak from", "peak_from")};
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
  t.columns = {text("timings", "timings"), whole("shapes", "shapes"),
               share("median error held out", "median_error_held_out"),
               share("max error held out", "max_error_held_out"), share("median error in fit", "median_error_in_fit")};
  t.add_row({dtype + " GEMMs on " + device, double(fit.distinct_shapes), fit.median_held_out, fit.max_held_out,
             fit.median_in_fit});
  t.notes.push_back(std::string(kErrorNote) + " (leave one shape out)");
  return t;
}

}  // namespace tp::cli
