// `trainplan calibrate import --gemm FILE.csv`: GEMM timings from the user's
// device (tools/measure_gemm.py) fitted into the GEMM curve of a calibration,
// normalised against the peak of a hardware descriptor or, for --hardware
// host, this CPU's FMA peak measured now. Prints gemm_timings, gemm_fit and
// gemm_check (cli/gemm_output.h); throws SpecError on bad input.
#pragma once
#include <string>

#include "cli/collective_output.h"

namespace trainplan::cli {

struct GemmImportOptions {
  std::string csv, hardware, dtype;
  int threads = 0;  // --hardware host: threads the timings used; 0: the file's "# threads:" line
  const CollectiveOutput* output = nullptr;
};

void import_gemm(const GemmImportOptions& options);

}  // namespace trainplan::cli
