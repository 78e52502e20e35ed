#include "spec/calibration_lookup.h"

#include <algorithm>
#include <cstdio>
#include <filesystem>

#include "spec/calibration_io.h"
#include "spec/calibration_origins.h"
#include "spec/error.h"
#include "spec/load.h"

namespace trainplan::spec {

std::vector<std::string> calibration_candidates(const HardwareSpec& hw, const std::string& stack,
                                               const std::vector<std::string>& bases) {
  const auto dir = std::filesystem::path(data_root()) / "data" / "calibration";
  std::vector<std::string> out;
  std::vector<std::string> names{stack};
  names.insert(names.end(), bases.begin(), bases.end());
  for (const std::string& name : names) {
    out.push_back((dir / (hw.name + "+" + name + ".json")).string());
    if (hw.family != hw.name) out.push_back((dir / (hw.family + "+" + name + ".json")).string());
  }
  if (hw.family != hw.name) out.push_back((dir / (hw.family + ".json")).string());
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
  if (hw.fabric_share.known()) c.collective.intra_node = hw.fabric_share.centre;
  if (hw.efa_share.known()) c.collective.inter_node = hw.efa_share.centre;
  if (hw.fabric_share.known() || hw.efa_share.known())
    c.description += "; collective shares at the centres of the descriptor's measured bands";
  if (hw.matmul_share.known()) {
    c.gemm.ceiling = hw.matmul_share.centre;
    c.description += "; GEMM ceiling at the centre of the descriptor's matmul band";
  }
  if (hw.memory_share.known()) {
    c.memory.ceiling = hw.memory_share.centre;
    c.description += "; memory-bound ops at the centre of the descriptor's memory band";
  }
  return c;
}

namespace {

void check_share(double share, const ShareBand& band, const std::string& file, const std::string& field,
                 const std::string& what) {
  constexpr double kSlack = 1e-9;  // a fit's logistic bound reaches the band's edge only in rounding
  if (!band.known() || (share >= band.low - kSlack && share <= band.high + kSlack)) return;
  char line[160];
  std::snprintf(line, sizeof line, "a share of %s within its measured band %.2f-%.2f, got %.3f", what.c_str(),
                band.low, band.high, share);
  // The band's source up to its first colon names where the evidence is (data/fabric-measurements.json ...).
  const std::string where = band.source.substr(0, std::min<size_t>(band.source.find(':'), 160));
  throw SpecError(file, field, std::string(line) + " (band: " + where + ")");
}

}  // namespace

void check_measured_bands(const Calibration& c, const HardwareSpec& hw, const std::string& file) {
  const auto measured = [&](const char* part) {
    const auto origin = c.origins.find(part);
    return origin != c.origins.end() && origin->second == "measured";
  };
  if (!measured("collective")) {
    check_share(c.collective.intra_node, hw.fabric_share, file, "$.collective.intra_node",
                hw.name + "'s fabric inside the instance");
    check_share(c.collective.inter_node, hw.efa_share, file, "$.collective.inter_node", hw.name + "'s EFA");
  }
  if (!measured("gemm_ceiling"))
    check_share(c.gemm.ceiling, hw.matmul_share, file, "$.gemm.ceiling", hw.name + "'s BF16 peak");
  if (!measured("memory")) {
    check_share(c.memory.ceiling, hw.memory_share, file, "$.memory.ceiling", hw.name + "'s HBM bandwidth");
    for (const auto& [op, efficiency] : c.memory_by_op)
      check_share(efficiency.ceiling, hw.memory_share, file, "$.memory_by_op." + op + ".ceiling", hw.name + "'s HBM bandwidth");
  }
}

CalibrationChoice find_calibration(const HardwareSpec& hw, const std::string& stack,
                                   const std::vector<std::string>& bases) {
  const std::vector<std::string> candidates = calibration_candidates(hw, stack, bases);
  for (size_t i = 0; i < candidates.size(); ++i) {
    if (!std::filesystem::exists(candidates[i])) continue;
    // Named relative to the data root, as a user would type it.
    const std::string shown = std::filesystem::relative(candidates[i], data_root()).string();
    const bool for_this_stack = std::filesystem::path(candidates[i]).stem().string().ends_with("+" + stack);
    Calibration c = load_calibration(candidates[i]).calibration;
    check_measured_bands(c, hw, shown);
    return {c, shown, for_this_stack};
  }
  return {assumed_calibration(hw), "built-in default", false};
}

}  // namespace trainplan::spec
