#include "calib/gemm_peak.h"

#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <filesystem>

#include "calib/cpu_name.h"
#include "kernels/cpu_features.h"
#include "kernels/fma_peak.h"
#include "kernels/thread_pool.h"
#include "spec/error.h"
#include "spec/load.h"

namespace trainplan::calib {

GemmPeak descriptor_peak(const spec::HardwareSpec& hw, const std::string& dtype) {
  const double peak = dtype == "bf16"   ? hw.peak_bf16_flops_per_s
                      : dtype == "fp32" ? hw.peak_fp32_flops_per_s
                      : dtype == "fp8"  ? hw.peak_fp8_flops_per_s
                                        : 0.0;
  if (!(peak > 0))
    throw spec::SpecError(hw.source_file, "peak_" + dtype,
                          "a " + dtype + " peak for " + hw.name + " to normalise the GEMM timings against (the "
                          "descriptor states none); time another dtype or name hardware that states one");
  // Named as a user would type it when it is one of the shipped descriptors.
  std::string file = hw.source_file;
  const std::string root = spec::data_root();
  if (file.rfind(root + "/", 0) == 0) file = std::filesystem::relative(file, root).string();
  GemmPeak out;
  out.flops_per_s = peak;
  out.source = "hardware descriptor " + file + " (" + dtype + " peak per device of " + hw.accelerator + ")";
  return out;
}

HostPeaks measure_host_peaks(int threads) {
  namespace k = trainplan::kernels;
  HostPeaks h;
  h.threads = std::clamp(threads, 1, k::ThreadPool::shared().size());
  h.cpu = cpu_name();
  h.isa = k::to_string(k::best_isa());
  // As `calibrate kernels` measures them: best of three, 0.1 s each; stream over 128 MiB arrays.
  h.peak.flops_per_s = k::fma_peak_flops_per_s(k::best_isa(), h.threads, 0.1, 3);
  h.peak.measured = true;
  char buf[160];
  std::snprintf(buf, sizeof buf, "this host's FP32 FMA peak (%s, %d %s), measured by trainplan at import", h.isa.c_str(),
                h.threads, h.threads == 1 ? "thread" : "threads");
  h.peak.source = buf;
  h.stream_bytes_per_s = k::stream_bytes_per_s(h.threads, 128l << 20, 3);
  h.memory_bytes = double(sysconf(_SC_PHYS_PAGES)) * double(sysconf(_SC_PAGE_SIZE));
  return h;
}

}  // namespace trainplan::calib
