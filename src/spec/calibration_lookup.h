// Which Calibration serves a (hardware, stack): the first file that exists of
// data/calibration/<hardware>+<stack>.json, <family>+<stack>.json, the same
// for each stack it extends (nearest first), <family>.json (fitted across
// that family's stacks), <hardware>.json; else the built-in assumed default.
// The choice names the file and why, so the output can say which calibration
// served. Throws SpecError on a bad file.
#pragma once
#include <string>
#include <vector>

#include "spec/calibration.h"
#include "spec/hardware_spec.h"
#include "spec/stack.h"

namespace trainplan::spec {

struct CalibrationChoice {
  Calibration calibration;
  std::string file;  // the path that served, or "built-in default"
  bool exact = false;  // fitted for this hardware (or family) and this stack
};

// The candidate paths, in lookup order.
std::vector<std::string> calibration_candidates(const HardwareSpec& hardware, const std::string& stack,
                                               const std::vector<std::string>& bases = {});
CalibrationChoice find_calibration(const HardwareSpec& hardware, const std::string& stack,
                                   const std::vector<std::string>& bases = {});
// The built-in assumption, named as one: collective shares and the GEMM ceiling
// at the centres of the hardware's measured bands where it states them.
Calibration assumed_calibration(const HardwareSpec& hardware);
// Refuses (SpecError naming `file` and the field) a calibration whose fitted or
// assumed collective share or GEMM ceiling leaves the band the hardware's
// measurements give (HardwareSpec::fabric_share, efa_share, matmul_share).
// Figures measured on the user's own cluster (origin "measured") are facts and pass.
void check_measured_bands(const Calibration& calibration, const HardwareSpec& hardware, const std::string& file);

}  // namespace trainplan::spec
