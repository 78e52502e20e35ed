// Megatron-LM (core_r0.13.0) as a launch script: torchrun with the nodes and
// devices, then pretrain_gpt.py with the plan, batch, precision and
// architecture as its own arguments. Writing refuses (spec::SpecError naming
// "megatron format" and the option) what Megatron-LM cannot express; reading
// refuses unknown values and contradictions, naming the file and the option.
#pragma once
#include <string>

#include "export/launch_job.h"

namespace trainplan::exporting {

std::string write_megatron(const LaunchJob& job);
LaunchJob read_megatron(const std::string& text, const std::string& file);

}  // namespace trainplan::exporting
