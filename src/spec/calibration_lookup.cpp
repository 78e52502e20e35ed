#include "spec/calibration_lookup.h"

#include <filesystem>

#include "spec/calibration_io.h"
#include "spec/calibration_origins.h"
#include "spec/load.h"

namespace tp::spec {

std::vector<std::string> calibration_candidates(const HardwareSpec& hw, const std::string& stack) {
  const auto dir = std::filesystem::path(data_root()) / "data" / "calibration";
  std::vector<std::string> out{(dir / (hw.name + "+" + stack + ".json")).string()};
  if (hw.family != hw.name) {
    out.push_back((dir / (hw.family + "+" + stack + ".json")).string());
    out.push_back((dir / (hw.family + ".json")).string());
  }
  out.push_back((dir / (hw.name + ".json")).string());
  return out;
}

Calibration assumed_calibration(const HardwareSpec& hw) {
  Calibration c;
  c.name = "assumed-default";
  c.accelerator = hw.accelerator;
  c.origin = "assumed";
  c.description = "built-in assumption: GEMM ceiling 70% of peak, 70% of HBM and link bandwidth";
  c.origins = uniform_origins("assumed");
  return c;
}

CalibrationChoice find_calibration(const HardwareSpec& hw, const std::string& stack) {
  const std::vector<std::string> candidates = calibration_candidates(hw, stack);
  for (size_t i = 0; i < candidates.size(); ++i) {
    if (!std::filesystem::exists(candidates[i])) continue;
    // Named relative to the data root, as a user would type it.
    const std::string shown = std::filesystem::relative(candidates[i], data_root()).string();
    const bool for_this_stack = std::filesystem::path(candidates[i]).stem().string().ends_with("+" + stack);
    return {load_calibration(candidates[i]).calibration, shown, for_this_stack};
  }
  return {assumed_calibration(hw), "built-in default", false};
}

}  // namespace tp::spec
