// Imported GEMM timings (gemm_csv.h) against a peak (gemm_peak.h): the
// shape-efficiency curve fitted as `calibrate kernels` fits it (fit_gemm:
// ceiling and m/n/k halves on log-efficiency), and each shape predicted by a
// curve fitted on every other shape (leave one shape out). Errors are
// |model time / measured time - 1|. Needs 5 distinct shapes: 4 parameters + 1.
#pragma once
#include <string>
#include <vector>

#include "calib/gemm_csv.h"
#include "spec/calibration.h"

namespace trainplan::calib {

struct GemmShapeFit {
  GemmTiming timing;
  double efficiency = 0;        // measured: FLOPs / seconds / peak
  double model_efficiency = 0;  // the curve fitted on every shape
  double error_in_fit = 0;      // that curve's error on this row
  double error_held_out = 0;    // the curve fitted without this shape (every row of it)
};

struct GemmFit {
  spec::GemmEfficiency efficiency;  // fitted on every row
  std::vector<GemmShapeFit> shapes;  // one per row, in the order given
  int distinct_shapes = 0;
  double median_held_out = 0, max_held_out = 0, median_in_fit = 0;
};

inline constexpr int kMinGemmShapes = 5;

// Throws SpecError(where, "rows", ...) with fewer than kMinGemmShapes distinct (m, n, k), and
// SpecError(where, "seconds", ...) when the largest GEMM reaches outside (0.1%, 400%] of the peak.
GemmFit fit_gemm_timings(const std::vector<GemmTiming>& rows, double peak_flops_per_s, const std::string& where);

// The rows of one dtype: `dtype`, or the file's only one when empty. Throws SpecError naming the
// file when it holds several and none is chosen, or none of the chosen one.
std::vector<GemmTiming> rows_of_dtype(const GemmCsv& csv, const std::string& dtype);

}  // namespace trainplan::calib
