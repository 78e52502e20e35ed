#include "spec/precision_support.h"

namespace trainplan::spec {

std::string runtime_refusal(const HardwareSpec& hardware, const Stack& stack) {
  const std::optional<DeviceRuntime> needed = runtime_of_family(hardware.family);
  if (!needed || !stack.capabilities.runs_on || *needed == *stack.capabilities.runs_on) return {};
  return stack.name + " runs under " + describe(*stack.capabilities.runs_on) + ", as " + stack.source_file +
         " states in runs_on; " + hardware.name + " (" + hardware.accelerator + ") needs " + describe(*needed) +
         ": name one of its stacks with --stack (`trainplan list` shows where each runs)" +
         (hardware.default_stack.empty() ? "" : ", omit --stack for " + hardware.name + "'s default, " + hardware.default_stack) +
         ", or write a stack file that extends " + stack.name + " and states how it runs on " + hardware.family +
         " (runs_on " + to_string(*needed) + ")";
}

std::string precision_refusal(const HardwareSpec& hardware, const Stack& stack, Precision precision) {
  if (precision == Precision::fp32_bf16_matmul && !stack.capabilities.fp32_bf16_matmul)
    return "fp32-bf16-matmul (an FP32 model whose matmuls the compiler casts to BF16) is not offered by " + stack.name +
           " (" + stack.source_file + ": fp32_bf16_matmul is not true); use fp32 or mixed-bf16";
  if (precision != Precision::fp8) return {};
  if (hardware.peak_fp8_flops_per_s <= 0)
    return "fp8 needs an FP8 matrix path, and " + hardware.name + " (" + hardware.accelerator +
           ") has none: its descriptor " + hardware.source_file + " gives no peak_fp8_tflops_per_chip";
  if (!stack.capabilities.fp8) return "fp8 is not offered by " + stack.name + " (" + stack.source_file + ": fp8 false)";
  return {};
}

}  // namespace trainplan::spec
