#include "calib/gemm_fit.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <set>
#include <tuple>

#include "calib/fit.h"
#include "calib/median.h"
#include "spec/error.h"

namespace trainplan::calib {
namespace {

using Shape = std::tuple<double, double, double>;

Shape shape_of(const GemmTiming& t) { return {t.m, t.n, t.k}; }

std::vector<Measurement> as_measurements(const std::vector<GemmTiming>& rows) {
  std::vector<Measurement> out;
  for (const GemmTiming& t : rows) {
    Measurement m;
    m.op = "gemm";
    m.label = t.label;
    m.m = t.m, m.n = t.n, m.k = t.k;
    m.flops = t.flops();
    m.median_s = t.seconds;
    out.push_back(m);
  }
  return out;
}

double error(const spec::GemmEfficiency& g, double peak, const GemmTiming& t) {
  return std::abs(t.flops() / (peak * g.at(t.m, t.n, t.k)) / t.seconds - 1);
}

}  // namespace

GemmFit fit_gemm_timings(const std::vector<GemmTiming>& rows, double peak, const std::string& where) {
  std::set<Shape> shapes;
  for (const GemmTiming& t : rows) shapes.insert(shape_of(t));
  if (int(shapes.size()) < kMinGemmShapes)
    throw spec::SpecError(where, "rows",
                          "at least " + std::to_string(kMinGemmShapes) + " distinct GEMM shapes (m, n, k) to fit the "
                          "curve's 4 parameters and hold one out, got " + std::to_string(shapes.size()));
  GemmFit out;
  out.distinct_shapes = int(shapes.size());
  const std::vector<Measurement> all = as_measurements(rows);
  out.efficiency = fit_gemm(all, peak);
  std::vector<double> held, fitted;
  for (const Shape& left_out : shapes) {
    std::vector<Measurement> others;
    for (std::size_t i = 0; i < rows.size(); ++i)
      if (shape_of(rows[i]) != left_out) others.push_back(all[i]);
    const spec::GemmEfficiency without = fit_gemm(others, peak);
    for (const GemmTiming& t : rows) {
      if (shape_of(t) != left_out) continue;
      GemmShapeFit s;
      s.timing = t;
      s.efficiency = t.flops() / t.seconds / peak;
      s.model_efficiency = out.efficiency.at(t.m, t.n, t.k);
      s.error_in_fit = error(out.efficiency, peak, t);
      s.error_held_out = error(without, peak, t);
      out.shapes.push_back(s);
    }
  }
  std::sort(out.shapes.begin(), out.shapes.end(),
            [](const GemmShapeFit& a, const GemmShapeFit& b) { return a.timing.line < b.timing.line; });
  for (const GemmShapeFit& s : out.shapes) held.push_back(s.error_held_out), fitted.push_back(s.error_in_fit);
  out.median_held_out = median(held);
  out.max_held_out = *std::max_element(held.begin(), held.end());
  out.median_in_fit = median(fitted);
  // The largest GEMM reaching outside (0.1%, 400%] of the peak means the timings or the peak are wrong: most
  // often seconds written in another unit, or the wrong hardware named (a calibration holds ceilings up to 4).
  const GemmTiming& largest = *std::max_element(
      rows.begin(), rows.end(), [](const GemmTiming& a, const GemmTiming& b) { return a.flops() < b.flops(); });
  const double at_largest = largest.flops() / largest.seconds / peak;
  if (!(at_largest > 1e-3 && at_largest <= 4)) {
    char got[64];
    std::snprintf(got, sizeof got, "%.3g%% of %.3g FLOP/s", 100 * at_largest, peak);
    throw spec::SpecError(where, "seconds",
                          "timings whose largest GEMM (line " + std::to_string(largest.line) +
                              ") reaches between 0.1% and 400% of the peak, got " + got +
                              ": seconds in another unit, or timings from other hardware than the peak's");
  }
  return out;
}

std::vector<GemmTiming> rows_of_dtype(const GemmCsv& csv, const std::string& dtype) {
  std::set<std::string> dtypes;
  for (const GemmTiming& t : csv.rows) dtypes.insert(t.dtype);
  std::string chosen = dtype;
  if (chosen.empty()) {
    if (dtypes.size() > 1) {
      std::string names;
      for (const auto& d : dtypes) names += (names.empty() ? "" : ", ") + d;
      throw spec::SpecError(csv.file, "dtype", "one dtype to fit, named with --dtype: the file holds " + names);
    }
    chosen = *dtypes.begin();
  }
  std::vector<GemmTiming> out;
  for (const GemmTiming& t : csv.rows)
    if (t.dtype == chosen) out.push_back(t);
  if (out.empty()) throw spec::SpecError(csv.file, "dtype", "rows of dtype " + chosen + " (--dtype), found none");
  return out;
}

}  // namespace trainplan::calib
