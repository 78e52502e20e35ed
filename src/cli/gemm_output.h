// The tables `calibrate import --gemm` prints and `calibrate check` reprints
// for imported GEMM timings, under fixed keys: gemm_timings (each row against
// the fitted curve, in the fit and held out), gemm_fit (the curve, the peak and
// where the peak came from) and gemm_check (held-out error summary).
#pragma once
#include <string>

#include "calib/gemm_fit.h"
#include "calib/gemm_peak.h"
#include "report/table.h"

namespace trainplan::cli {

report::Table gemm_timings_table(const calib::GemmFit& fit, const std::string& file);
report::Table gemm_fit_table(const calib::GemmFit& fit, const std::string& dtype, const std::string& device,
                             const calib::GemmPeak& peak);
report::Table gemm_check_table(const calib::GemmFit& fit, const std::string& dtype, const std::string& device);

}  // namespace trainplan::cli
