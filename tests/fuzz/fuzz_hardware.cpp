// Fuzz target: a hardware descriptor read as `--hardware FILE` reads it
// (spec::parse_json_text, then spec::hardware_from_json). The only refusal
// allowed is spec::SpecError; an accepted instance has positive, finite figures.
#include <cmath>
#include <nlohmann/json.hpp>

#include "fuzz_text.h"
#include "spec/error.h"
#include "spec/json_text.h"
#include "spec/load.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string file = "hardware/fuzz.json";
  try {
    const trainplan::spec::HardwareSpec hw =
        trainplan::spec::hardware_from_json(trainplan::spec::parse_json_text(trainplan::fuzz::text_of(data, size), file), file);
    for (const double figure : {hw.peak_bf16_flops_per_s, hw.peak_fp32_flops_per_s, hw.hbm_bytes, hw.hbm_bytes_per_s,
                                hw.chip_fabric_bytes_per_s, hw.efa_bytes_per_s(), hw.efa_latency_s, hw.fabric_latency_s})
      FUZZ_EXPECT(std::isfinite(figure) && figure > 0);
    FUZZ_EXPECT(hw.chips_per_instance >= 1 && hw.devices_per_chip >= 1);
  } catch (const trainplan::spec::SpecError&) {
  }
  return 0;
}
