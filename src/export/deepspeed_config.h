// DeepSpeed with Megatron-DeepSpeed: a ds_config JSON (batch, gradient
// accumulation, ZeRO stage, overlap, BF16) and a launch script whose
// pretrain_gpt.py arguments name it with --deepspeed_config. The fork follows
// the job's stack: megatron-deepspeed-ms gets microsoft's maintained fork with
// DeepSpeed 0.16.2 (deepspeed_ms_args.h); every other stack bigscience's, with
// DeepSpeed 0.6.5, as BLOOM ran it. With BF16, DeepSpeed's own BF16 optimizer
// shards the FP32 states over DP (ZeRO-1's memory) under ZeRO stage 0, the only
// stage it allows with pipeline parallelism; trainplan writes and reads it so.
// Reading tells the fork from the script's options.
#pragma once
#include <string>
#include <vector>

#include "export/launch_job.h"

namespace trainplan::exporting {

struct DeepSpeedFiles {
  std::string script;     // the launch script
  std::string ds_config;  // the JSON it names
};

// `config_name`: the ds_config file name the script names (beside the script).
DeepSpeedFiles write_deepspeed(const LaunchJob& job, const std::string& config_name);

// `script_text` may be empty when only a ds_config is given; `read_config(name)`
// returns the text of the ds_config the script names. A script passing no option only
// one Megatron-DeepSpeed fork defines is read as the fork of its trainplan header's stack,
// else of `stack` (the caller's --stack), else as bigscience's; a note says which and how
// to choose the other.
LaunchJob read_deepspeed(const std::string& script_text, const std::string& script_file, const std::string& config_text,
                         const std::string& config_file, const std::string& stack = "");

}  // namespace trainplan::exporting
