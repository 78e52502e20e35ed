// The calibration file `calibrate import --gemm` writes: a base calibration
// whose GEMM curve is replaced by the fit on imported timings (origins
// gemm_ceiling and gemm_shape measured), with extra "gemm_timings" (the rows,
// the peak and where it came from, the device, how and when) so `calibrate
// check` can refit it, and for this CPU a "host" section `estimate --hardware
// host` reads. A base's kernel sweep (measurements, model, host) is dropped:
// it described the curve and peak being replaced. Bad sections throw SpecError.
#pragma once
#include <optional>
#include <string>
#include <vector>

#include "calib/gemm_csv.h"
#include "calib/gemm_fit.h"
#include "calib/gemm_peak.h"
#include "spec/calibration_io.h"

namespace trainplan::calib {

struct GemmProvenance {
  std::string how;       // "imported by `trainplan calibrate import --gemm` from t.csv"
  std::string date;      // YYYY-MM-DD
  std::string base;      // the file the other parts came from, or "built-in default"
  std::string hardware;  // the descriptor named, or "host"
  std::string accelerator;  // what the file describes ("NVIDIA H100-SXM5-80GB", "host CPU (...)")
  std::string dtype;
  GemmPeak peak;
  std::optional<HostPeaks> host;  // this CPU, written as the host section --hardware host reads; none for a descriptor
};

spec::CalibrationFile gemm_calibration(const spec::CalibrationFile& base, const GemmCsv& csv,
                                       const std::vector<GemmTiming>& rows, const GemmFit& fit,
                                       const GemmProvenance& provenance, const std::string& name);

struct StoredGemm {
  std::vector<GemmTiming> rows;
  double peak_flops_per_s = 0;
  std::string peak_source, device, dtype;
};
bool has_gemm_timings(const spec::CalibrationFile& file);
StoredGemm stored_gemm_timings(const spec::CalibrationFile& file, const std::string& path);

}  // namespace trainplan::calib
