// Whether a precision can run on a hardware under a stack: FP8 needs an FP8
// matrix path in the hardware descriptor (peak_fp8_tflops_per_chip) and a
// stack that offers it. Returns the reason in words, or empty when it can.
#pragma once
#include <string>

#include "spec/hardware_spec.h"
#include "spec/stack.h"
#include "spec/workload.h"

namespace trainplan::spec {

std::string precision_refusal(const HardwareSpec& hardware, const Stack& stack, Precision precision);

}  // namespace trainplan::spec
