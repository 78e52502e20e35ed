// Whether a stack, and a precision under it, can run on a hardware: the stack
// needs the device runtime the accelerator runs (stack file "runs_on"); FP8
// needs an FP8 matrix path in the hardware descriptor (peak_fp8_tflops_per_chip)
// and a stack that offers it. Each returns the reason in words, or empty when it can.
#pragma once
#include <string>

#include "spec/hardware_spec.h"
#include "spec/stack.h"
#include "spec/workload.h"

namespace trainplan::spec {

std::string runtime_refusal(const HardwareSpec& hardware, const Stack& stack);
std::string precision_refusal(const HardwareSpec& hardware, const Stack& stack, Precision precision);

}  // namespace trainplan::spec
