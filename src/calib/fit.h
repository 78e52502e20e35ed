// Fits the efficiency model to a kernel sweep and checks it on held-out
// shapes. GEMM: ceiling * m/(m+m_half) * n/(n+n_half) * k/(k+k_half) of the
// FMA peak, by Levenberg-Marquardt on log-efficiency (calib/levenberg_marquardt.h);
// memory ops: time = (bytes + bytes_half) / (ceiling * bandwidth), linear least
// squares on relative error; attention: one factor on top of the GEMM curve.
// Those are the Calibration fields the cost model reads; fit_calibration also
// stores the richer KernelModel (kernel_model.h) that `calibrate check` scores.
#pragma once
#include <string>
#include <vector>

#include "spec/calibration_io.h"
#include "calib/sweep.h"

namespace trainplan::calib {
using spec::Calibration;
using spec::CalibrationFile;
using spec::GemmEfficiency;
using spec::MemoryEfficiency;

GemmEfficiency fit_gemm(const std::vector<Measurement>& points, double peak_flops_per_s);
MemoryEfficiency fit_memory(const std::vector<Measurement>& points, double bytes_per_s);

// Predicted seconds for one measurement's op and shape under `c`.
double predict_seconds(const Calibration& c, double peak_flops_per_s, double bytes_per_s, const Measurement& m);

// Calibration (origin "measured") from a sweep, fitted on the points not held out;
// extra carries host, date, measurements, fit errors and fitted_on.
CalibrationFile fit_calibration(const Sweep& sweep, const std::string& name, const std::string& date);

struct CheckRow {
  std::string op;
  int points = 0;
  double median_rel_error = 0, max_rel_error = 0;  // the file's kernel model (or its fields if it has none)
  double median_rel_error_fields = 0;              // the Calibration fields alone, as the cost model reads them
};
// Errors per op kind predicting the held-out measurements stored in `file`
// (or all of them with include_fitted). Throws SpecError if it has none.
std::vector<CheckRow> check_calibration(const CalibrationFile& file, bool include_fitted = false);

nlohmann::json to_json(const Measurement& m);
Measurement measurement_from_json(const nlohmann::json& j, const std::string& file, const std::string& path);

}  // namespace trainplan::calib
