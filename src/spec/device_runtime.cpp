#include "spec/device_runtime.h"

#include <array>

namespace trainplan::spec {

namespace {

// The NVIDIA families the shipped descriptors and the GPU generations around
// them use (hardware/*.json "family").
constexpr std::array<std::string_view, 9> kNvidiaFamilies{"v100", "a100", "a10", "l4",    "l40",
                                                          "h100", "h200", "b200", "gb200"};

}  // namespace

const char* to_string(DeviceRuntime runtime) {
  switch (runtime) {
    case DeviceRuntime::cuda: return "cuda";
    case DeviceRuntime::synapse: return "synapse";
    case DeviceRuntime::neuron: return "neuron";
  }
  return "cuda";
}

const char* describe(DeviceRuntime runtime) {
  switch (runtime) {
    case DeviceRuntime::cuda: return "CUDA (NVIDIA GPUs)";
    case DeviceRuntime::synapse: return "SynapseAI (Intel Gaudi)";
    case DeviceRuntime::neuron: return "Neuron (AWS Trainium, Inferentia)";
  }
  return "";
}

std::optional<DeviceRuntime> parse_device_runtime(std::string_view text) {
  for (DeviceRuntime r : {DeviceRuntime::cuda, DeviceRuntime::synapse, DeviceRuntime::neuron})
    if (text == to_string(r)) return r;
  return std::nullopt;
}

std::optional<DeviceRuntime> runtime_of_family(const std::string& family) {
  if (family.starts_with("trainium") || family.starts_with("inferentia")) return DeviceRuntime::neuron;
  if (family.starts_with("gaudi")) return DeviceRuntime::synapse;
  for (std::string_view nvidia : kNvidiaFamilies)
    if (family == nvidia) return DeviceRuntime::cuda;
  return std::nullopt;
}

}  // namespace trainplan::spec
