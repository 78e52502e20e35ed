#include "calib/gemm_calibration.h"

#include <cmath>
#include <cstdio>
#include <nlohmann/json.hpp>

#include "spec/calibration_origins.h"
#include "spec/json_reader.h"

namespace trainplan::calib {
namespace {

using nlohmann::json;

std::string engineering(double v, const char* unit) {
  const char* prefixes[] = {"", "k", "M", "G", "T", "P"};
  int p = 0;
  while (std::abs(v) >= 1000 && p < 5) v /= 1000, ++p;
  char buf[48];
  std::snprintf(buf, sizeof buf, "%.3g %s%s", v, prefixes[p], unit);
  return buf;
}

// What a kernel sweep (`calibrate kernels`) keeps beside its fields: measured against the curve and
// peak an import replaces, so not carried over.
const char* const kKernelSweepKeys[] = {"measurements", "model", "model_note", "host", "fit", "fitted_on", "date"};

}  // namespace

spec::CalibrationFile gemm_calibration(const spec::CalibrationFile& base, const GemmCsv& csv,
                                       const std::vector<GemmTiming>& rows, const GemmFit& fit,
                                       const GemmProvenance& p, const std::string& name) {
  spec::CalibrationFile out = base;
  spec::Calibration& c = out.calibration;
  const std::string base_origin = base.calibration.origin.empty() ? "assumed" : base.calibration.origin;
  if (base.extra->contains("measurements"))
    for (const char* key : kKernelSweepKeys) out.extra->erase(key);
  c.name = name;
  c.accelerator = p.accelerator;
  c.origin = "measured";
  c.gemm = fit.efficiency;
  if (c.origins.empty()) c.origins = spec::inferred_origins(base.calibration, *base.extra);
  c.origins["gemm_ceiling"] = "measured";
  c.origins["gemm_shape"] = "measured";
  char figures[160];
  std::snprintf(figures, sizeof figures, "ceiling %.3f, m_half %.1f, n_half %.1f, k_half %.1f", c.gemm.ceiling,
                c.gemm.m_half, c.gemm.n_half, c.gemm.k_half);
  c.description = "GEMM curve (" + std::string(figures) + ") " + p.how + ": " + std::to_string(rows.size()) + " " +
                  p.dtype + " GEMMs (" + std::to_string(fit.distinct_shapes) + " shapes) on " + csv.device +
                  ", against " + engineering(p.peak.flops_per_s, "FLOP/s") + " from " + p.peak.source +
                  "; attention, memory, collective and overhead parts from " + p.base + " (" + base_origin + ")";
  json rows_json = json::array();
  for (const GemmTiming& t : rows)
    rows_json.push_back({{"m", t.m}, {"n", t.n}, {"k", t.k}, {"seconds", t.seconds}, {"spread", t.spread},
                         {"label", t.label}, {"line", t.line}});
  (*out.extra)["gemm_timings"] = {
      {"how", p.how},
      {"date", p.date},
      {"file", csv.file},
      {"device", csv.device},
      {"dtype", p.dtype},
      {"hardware", p.hardware},
      {"base", p.base},
      {"peak_flops_per_s", p.peak.flops_per_s},
      {"peak_source", p.peak.source},
      {"peak_measured", p.peak.measured},
      {"csv_metadata", csv.meta},
      {"method", "fit_gemm (src/calib/fit.cpp): ceiling * m/(m+m_half) * n/(n+n_half) * k/(k+k_half) of the peak by "
                 "damped Gauss-Newton on log-efficiency over every row; `calibrate check` refits leaving one shape "
                 "out at a time"},
      {"fit", {{"shapes", fit.distinct_shapes},
               {"median_rel_error_held_out", fit.median_held_out},
               {"max_rel_error_held_out", fit.max_held_out},
               {"median_rel_error_in_fit", fit.median_in_fit}}},
      {"rows", rows_json}};
  if (p.host) {
    const HostPeaks& h = *p.host;
    (*out.extra)["host"] = {{"cpu", h.cpu},
                            {"isa", h.isa},
                            {"threads", h.threads},
                            {"fma_peak_flops_per_s", h.peak.flops_per_s},
                            {"stream_bytes_per_s", h.stream_bytes_per_s},
                            {"memory_bytes", h.memory_bytes}};
  }
  return out;
}

bool has_gemm_timings(const spec::CalibrationFile& file) { return file.extra->contains("gemm_timings"); }

StoredGemm stored_gemm_timings(const spec::CalibrationFile& file, const std::string& path) {
  const spec::JsonReader r(path);
  const std::string at = "$.gemm_timings";
  const json& g = r.field(*file.extra, "$", "gemm_timings");
  StoredGemm s;
  s.peak_flops_per_s = r.number(g, at, "peak_flops_per_s", 0);
  s.peak_source = r.string(g, at, "peak_source");
  s.device = r.string(g, at, "device");
  s.dtype = r.string(g, at, "dtype");
  const json& rows = r.field(g, at, "rows");
  if (!rows.is_array() || rows.empty()) r.fail(at + ".rows", "a non-empty array");
  for (std::size_t i = 0; i < rows.size(); ++i) {
    const std::string row = at + ".rows[" + std::to_string(i) + "]";
    GemmTiming t;
    t.m = r.number(rows[i], row, "m", 0);
    t.n = r.number(rows[i], row, "n", 0);
    t.k = r.number(rows[i], row, "k", 0);
    t.seconds = r.number(rows[i], row, "seconds", 0);
    t.dtype = s.dtype;
    if (rows[i].contains("label") && rows[i]["label"].is_string()) t.label = rows[i]["label"].get<std::string>();
    if (rows[i].contains("line") && rows[i]["line"].is_number_integer()) t.line = rows[i]["line"].get<int>();
    if (rows[i].contains("spread") && rows[i]["spread"].is_number()) t.spread = rows[i]["spread"].get<double>();
    s.rows.push_back(t);
  }
  return s;
}

}  // namespace trainplan::calib
