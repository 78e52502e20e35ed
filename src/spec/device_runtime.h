// The device runtime a stack runs on (CUDA on NVIDIA GPUs, Intel Gaudi's
// SynapseAI, AWS Neuron) and which one a hardware descriptor's accelerator
// needs. A stack priced on hardware whose runtime it lacks (NeuronX Distributed
// on an H100, Megatron-LM on a trn1) is refused, not priced with the wrong
// kernels and calibration.
#pragma once
#include <optional>
#include <string>
#include <string_view>

namespace trainplan::spec {

enum class DeviceRuntime { cuda, synapse, neuron };

const char* to_string(DeviceRuntime runtime);                     // "cuda", as stack files write it
const char* describe(DeviceRuntime runtime);                      // "CUDA (NVIDIA GPUs)"
std::optional<DeviceRuntime> parse_device_runtime(std::string_view text);
// The runtime an accelerator family runs ("trainium1": neuron, "gaudi2": synapse,
// "h100": cuda); nullopt for a family trainplan does not know (a user's own
// descriptor), which no stack is refused on.
std::optional<DeviceRuntime> runtime_of_family(const std::string& family);

}  // namespace trainplan::spec
