// The pretrain_gpt.py arguments of microsoft's Megatron-DeepSpeed fork
// (microsoft/Megatron-DeepSpeed@f4157bea megatron/arguments.py), the fork that
// stacks megatron-deepspeed-ms (DeepSpeed's pipeline engine, BF16 optimizer),
// megatron-deepspeed-ms-zero3 (--no-pipeline-parallel, ZeRO-3) and, without the
// pipeline engine at ZeRO 0-2, megatron-deepspeed-ms-nopipe (FP16_Optimizer or
// the ZeRO-1/2 optimizer), the same with DeepSpeed-Ulysses (--ds-sequence-parallel-size,
// megatron-deepspeed-ms-nopipe-ulysses) and megatron-deepspeed-ms-nopipe-bf16-optimizer,
// the same 16-bit-gradient optimizers under the pipeline engine, megatron-deepspeed-ms-fp16, and
// megatron-deepspeed-ms's BF16 optimizer accumulating in BF16, megatron-deepspeed-ms-bf16-accum, run:
// Megatron SP, RMSNorm, SwiGLU, rotary, GQA, untied embeddings, no linear bias,
// selective or full recompute. Writing refuses what the fork cannot express
// (SpecError naming "deepspeed format" and the option); reading fills the
// plan's SP, CP (--ds-sequence-parallel-size) and recompute and, when stated,
// the architecture.
#pragma once
#include <string>

#include "export/launch_format.h"
#include "export/launch_job.h"
#include "export/shell_args.h"

namespace trainplan::exporting {

inline constexpr const char* kMicrosoftDeepSpeedStack = "megatron-deepspeed-ms";
// The same fork at ZeRO stage 3 without DeepSpeed's pipeline engine, as its
// examples_deepspeed/azure/run-175b.sh runs (stacks/megatron-deepspeed-ms-zero3.json).
inline constexpr const char* kMicrosoftDeepSpeedZero3Stack = "megatron-deepspeed-ms-zero3";

// The fork with --no-pipeline-parallel at ZeRO 0-2 (GPTModel under DeepSpeed's plain engine):
// FP16 through FP16_Optimizer (ZeRO 0) or the ZeRO-1/2 optimizer (stacks/megatron-deepspeed-ms-nopipe.json),
// BF16 through DeepSpeed's BF16 optimizer (stacks/megatron-deepspeed-ms-nopipe-bf16-optimizer.json).
inline constexpr const char* kMicrosoftDeepSpeedNoPipeStack = "megatron-deepspeed-ms-nopipe";
inline constexpr const char* kMicrosoftDeepSpeedNoPipeBf16Stack = "megatron-deepspeed-ms-nopipe-bf16-optimizer";
// megatron-deepspeed-ms-nopipe's optimizers with DeepSpeed-Ulysses, the fork's --ds-sequence-parallel-size
// (trainplan's CP), as examples_deepspeed/sequence_parallel/ds_pretrain_gpt_1.3B_seq_parallel_32k.sh runs it:
// without the pipeline engine (its get_batch_pipe does not split the sequence), TP 1, flash attention
// (stacks/megatron-deepspeed-ms-nopipe-ulysses.json).
inline constexpr const char* kMicrosoftDeepSpeedUlyssesStack = "megatron-deepspeed-ms-nopipe-ulysses";
// The optimizers of megatron-deepspeed-ms-nopipe under DeepSpeed's pipeline engine (GPTModelPipe):
// FP16 at ZeRO 0-1, or BF16 at ZeRO 1 with 16-bit gradients (stacks/megatron-deepspeed-ms-fp16.json).
inline constexpr const char* kMicrosoftDeepSpeedFp16Stack = "megatron-deepspeed-ms-fp16";
// megatron-deepspeed-ms's BF16 optimizer with data_types.grad_accum_dtype "bf16" (ds_config stage 0):
// a BF16 accumulator all-reduced in BF16, its partition cast to FP32 at the step
// (stacks/megatron-deepspeed-ms-bf16-accum.json).
inline constexpr const char* kMicrosoftDeepSpeedBf16AccumStack = "megatron-deepspeed-ms-bf16-accum";

// Whether the stack prices DeepSpeed's FP16_Optimizer or ZeRO optimizer with 16-bit gradients.
inline bool microsoft_deepspeed_16bit_gradients(const std::string& stack) {
  return stack == kMicrosoftDeepSpeedNoPipeStack || stack == kMicrosoftDeepSpeedUlyssesStack ||
         stack == kMicrosoftDeepSpeedFp16Stack;
}

// Whether the stack runs the fork without DeepSpeed's pipeline engine: written with --no-pipeline-parallel.
inline bool microsoft_deepspeed_without_pipeline(const std::string& stack) {
  return stack == kMicrosoftDeepSpeedZero3Stack || stack == kMicrosoftDeepSpeedNoPipeStack ||
         stack == kMicrosoftDeepSpeedUlyssesStack || stack == kMicrosoftDeepSpeedNoPipeBf16Stack;
}

// Whether `stack` names one of the fork's stacks (any of the seven above).
inline bool is_microsoft_deepspeed_stack(const std::string& stack) {
  return stack == kMicrosoftDeepSpeedStack || stack == kMicrosoftDeepSpeedFp16Stack ||
         stack == kMicrosoftDeepSpeedBf16AccumStack || microsoft_deepspeed_without_pipeline(stack);
}

// The release and source named in the header of a file written for this fork.
const FormatInfo& microsoft_deepspeed_info();

// `ds_stage`: the ZeRO stage the ds_config states (written as --zero-stage too).
ArgList microsoft_deepspeed_arguments(const LaunchJob& job, int ds_stage);

// Which Megatron-DeepSpeed fork a pretrain_gpt.py script is for, told by the options only one
// fork's megatron/arguments.py defines (microsoft's --vocab-size, --normalization,
// --no-pipeline-parallel, --lr-warmup-tokens, ...; bigscience's --pad-vocab-size-to,
// --position-embedding-type, --glu-activation, ...): each parses strictly, so the other fork
// would exit on them. `unknown` where the script passes none (both forks run it; the caller
// decides by the stack and says so); refused naming `file` where it mixes both.
enum class MegatronDeepSpeedFork { microsoft, bigscience, unknown };
MegatronDeepSpeedFork megatron_deepspeed_fork(const ShellArgs& args, const std::string& file);

// Reads SP, CP (--ds-sequence-parallel-size, refused beside what the fork
// asserts against: TP or PP > 1, --sequence-parallel, the pipeline engine,
// selective recompute, no flash attention, GQA), recompute and (with
// --num-layers, --hidden-size, --num-attention-heads and --vocab-size) the
// architecture into `job`.
void read_microsoft_deepspeed_arguments(const ShellArgs& args, const std::string& file, LaunchJob& job);

}  // namespace trainplan::exporting
