#include "calib/host_hardware.h"

#include <nlohmann/json.hpp>

#include "spec/error.h"

namespace trainplan::calib {

spec::HardwareSpec host_hardware(const CalibrationFile& file) {
  const auto& extra = *file.extra;
  const std::string where = "calibration " + file.calibration.name;
  if (!extra.contains("host") || !extra["host"].is_object())
    throw spec::SpecError(where, "$.host", "a host section (only measured calibrations describe a host)");
  const auto& h = extra["host"];
  auto positive = [&](const char* key) {
    if (!h.contains(key) || !h[key].is_number() || h[key].get<double>() <= 0)
      throw spec::SpecError(where, std::string("$.host.") + key, "a positive number");
    return h[key].get<double>();
  };
  spec::HardwareSpec hw;
  hw.name = "host";
  hw.family = "host";
  hw.source_file = where;
  hw.accelerator = h.value("cpu", std::string("host CPU"));
  hw.chips_per_instance = 1;
  hw.devices_per_chip = 1;
  // A host calibration states its GEMM efficiencies against gemm_peak_flops_per_s, the
  // loop of the instruction its GEMM ran on (TDPBF16PS, VDPBF16PS or the FP32 FMA), so
  // that is the BF16 peak; files from before it used the FP32 FMA peak for both.
  hw.peak_fp32_flops_per_s = positive("fma_peak_flops_per_s");
  hw.peak_bf16_flops_per_s = h.contains("gemm_peak_flops_per_s") ? positive("gemm_peak_flops_per_s")
                                                                   : hw.peak_fp32_flops_per_s;
  hw.hbm_bytes_per_s = positive("stream_bytes_per_s");
  hw.hbm_bytes = h.value("memory_bytes", 0.0);
  hw.fabric = spec::FabricTopology::switched;
  return hw;
}

}  // namespace trainplan::calib
