// What DeepSpeed 0.16.2 builds from a ds_config at ZeRO stage 0-2: the optimizer
// wrapper and the dtype it accumulates gradients in (deepspeed/runtime/engine.py@b344c04d
// :939-954, :1229-1281), the trainplan stack that prices it for microsoft's
// Megatron-DeepSpeed fork, or a refusal naming the ds_config key; and
// zero_optimization's element counts as DeepSpeed's config reads them.
#pragma once
#include <nlohmann/json_fwd.hpp>
#include <string>

#include "export/launch_job.h"

namespace trainplan::exporting {

// An element count of zero_optimization (an integer, or a JSON number with no
// fraction); `fallback`, DeepSpeed's default, where absent. Throws spec::SpecError
// naming `config_file` and the key otherwise.
long long zero_element_count(const nlohmann::json& zero, const std::string& key, long long fallback,
                             const std::string& config_file);

struct DeepSpeedOptimizer {
  enum Wrapper { none, fp16_optimizer, bf16_optimizer, zero_optimizer } wrapper = none;
  std::string model_dtype, accumulation;  // "fp16", "bf16", "fp32"
  std::string raises;                     // what DeepSpeed refuses at start-up, if anything
};

DeepSpeedOptimizer deepspeed_optimizer(bool fp16, bool bf16, int stage, const std::string& grad_accum_dtype,
                                       bool pipeline_engine);

// microsoft's fork at ds_config stage 0-2 (stage 2 without the pipeline engine,
// which the caller checks): sets job.stack_name (where the file's header names
// none) to the stack that prices the optimizer DeepSpeed builds, and the stage-1
// or -2 bucket; throws naming the key where no stack does.
void read_microsoft_optimizer(const DeepSpeedOptimizer& o, int stage, bool no_pipeline,
                              const std::string& config_file, const nlohmann::json& zero, LaunchJob& job);

}  // namespace trainplan::exporting
