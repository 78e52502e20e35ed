// Which Calibration serves a (hardware, stack): the first file that exists of
// data/calibration/<hardware>+<stack>.json, <family>+<stack>.json,
// <family>.json (fitted across that family's stacks), <hardware>.json; else
// the built-in assumed default. The choice names the file and why, so the
// output can say which calibration served. Throws SpecError on a bad file.
#pragma once
#include <string>
#include <vector>

#include "spec/calibration.h"
#include "spec/hardware_spec.h"
#include "spec/stack.h"

namespace tp::spec {

struct CalibrationChoice {
  Calibration calibration;
  std::string file;  // the path that served, or "built-in default"
  bool exact = false;  // fitted for this hardware (or family) and this stack
};

// The candidate paths, in lookup order.
std::vector<std::string> calibration_candidates(const HardwareSpec& hardware, const std::string& stack);
CalibrationChoice find_calibration(const HardwareSpec& hardware, const std::string& stack);
// The built-in assumption, named as one.
Calibration assumed_calibration(const HardwareSpec& hardware);

}  // namespace tp::spec
