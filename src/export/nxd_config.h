// NeuronX Distributed Training (Neuron SDK 2.20) as its YAML: trainer nodes and
// devices, distributed_strategy (TP, PP, virtual stages, ZeRO-1, SP), data
// batch sizes, model sequence length, recompute and architecture, precision.type.
// NxD offers ZeRO-1 only and no TP overlap. DP overlap has no option: a plan
// read back asks for it, and the stack (stacks/neuronx-distributed.json) says
// NxD reduces after the accumulation loop.
#pragma once
#include <string>

#include "export/launch_job.h"

namespace trainplan::exporting {

std::string write_nxd(const LaunchJob& job);
LaunchJob read_nxd(const std::string& text, const std::string& file);

}  // namespace trainplan::exporting
