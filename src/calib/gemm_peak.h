// The peak FLOP/s that imported GEMM timings are normalised against, and where
// it came from, in words for the output: an accelerator's per-device peak for
// the dtype from its hardware descriptor, or for this CPU its FP32 FMA peak
// measured now over the threads the timings used (kernels/fma_peak.h), the
// figure `calibrate kernels` and `estimate --hardware host` use for every dtype.
#pragma once
#include <string>

#include "spec/hardware_spec.h"

namespace trainplan::calib {

struct GemmPeak {
  double flops_per_s = 0;
  std::string source;  // "hardware descriptor hardware/p5.48xlarge.json (peak_bf16_tflops_per_chip)", ...
  bool measured = false;
};

// Throws SpecError when the descriptor states no peak for `dtype` (bf16, fp32, fp8).
GemmPeak descriptor_peak(const spec::HardwareSpec& hardware, const std::string& dtype);

// This host, measured: the FP32 FMA peak over `threads` (clamped to the hardware threads) and the
// streaming bandwidth, for the host section `estimate --hardware host` reads.
struct HostPeaks {
  GemmPeak peak;
  std::string cpu, isa;
  int threads = 0;  // as measured
  double stream_bytes_per_s = 0, memory_bytes = 0;
};
HostPeaks measure_host_peaks(int threads);

}  // namespace trainplan::calib
