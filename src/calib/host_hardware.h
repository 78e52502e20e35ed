// The `host` hardware descriptor: this CPU seen as one accelerator, with peak
// FLOP/s and memory bandwidth taken from a measured calibration file's host
// section (FMA peak over all threads used, streaming bandwidth). One chip, one
// device, switched fabric, no prices. Throws SpecError if the file lacks them.
#pragma once
#include "spec/calibration_io.h"
#include "spec/hardware_spec.h"

namespace trainplan::calib {
using spec::Calibration;
using spec::CalibrationFile;

spec::HardwareSpec host_hardware(const CalibrationFile& file);

}  // namespace trainplan::calib
