// The pretrain_gpt.py arguments of microsoft's Megatron-DeepSpeed fork
// (microsoft/Megatron-DeepSpeed@f4157bea megatron/arguments.py), the fork that
// stack megatron-deepspeed-ms runs: Megatron sequence parallelism, RMSNorm,
// SwiGLU, rotary, GQA, untied embeddings, no linear bias, selective or full
// recompute, under DeepSpeed's pipeline engine. Writing refuses what the fork
// cannot express (SpecError naming "deepspeed format" and the option); reading
// fills the plan's SP and recompute and, when stated, the architecture.
#pragma once
#include <string>

#include "export/launch_format.h"
#include "export/launch_job.h"
#include "export/shell_args.h"

namespace trainplan::exporting {

inline constexpr const char* kMicrosoftDeepSpeedStack = "megatron-deepspeed-ms";

// The release and source named in the header of a file written for this fork.
const FormatInfo& microsoft_deepspeed_info();

// `ds_stage`: the ZeRO stage the ds_config states (written as --zero-stage too).
ArgList microsoft_deepspeed_arguments(const LaunchJob& job, int ds_stage);

// True when `args` use this fork's own options (--vocab-size, --normalization,
// --swiglu, ...); refused naming `file` when they mix in bigscience's
// (--pad-vocab-size-to, --position-embedding-type, --glu-activation).
bool is_microsoft_deepspeed_script(const ShellArgs& args, const std::string& file);

// Reads SP, recompute and (with --num-layers, --hidden-size,
// --num-attention-heads and --vocab-size) the architecture into `job`.
void read_microsoft_deepspeed_arguments(const ShellArgs& args, const std::string& file, LaunchJob& job);

}  // namespace trainplan::exporting
