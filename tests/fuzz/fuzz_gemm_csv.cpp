// Fuzz target: a GEMM timings CSV as `calibrate import --gemm` reads it
// (calib::parse_gemm_csv, then calib::fit_gemm_timings when it holds enough
// shapes). The only refusal allowed is spec::SpecError; an accepted file has
// rows with positive shapes and times of a known dtype, and its fit finite errors.
#include <cmath>

#include "calib/gemm_csv.h"
#include "calib/gemm_fit.h"
#include "fuzz_text.h"
#include "spec/error.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  trainplan::calib::GemmCsv csv;
  try {
    csv = trainplan::calib::parse_gemm_csv(std::string(trainplan::fuzz::text_of(data, size)), "fuzz.csv");
  } catch (const trainplan::spec::SpecError&) {
    return 0;
  }
  FUZZ_EXPECT(!csv.rows.empty());
  for (const auto& r : csv.rows) {
    FUZZ_EXPECT(r.m >= 1 && r.n >= 1 && r.k >= 1 && r.seconds > 0 && std::isfinite(r.seconds));
    FUZZ_EXPECT(r.dtype == "bf16" || r.dtype == "fp32" || r.dtype == "fp8");
  }
  try {
    const auto rows = trainplan::calib::rows_of_dtype(csv, "");
    const auto fit = trainplan::calib::fit_gemm_timings(rows, 1e12, "fuzz.csv");
    FUZZ_EXPECT(std::isfinite(fit.median_held_out) && std::isfinite(fit.efficiency.ceiling));
  } catch (const trainplan::spec::SpecError&) {
  }
  return 0;
}
