// Gradient accumulation: adding each later micro-batch's gradients into the
// step's buffer, as the stack runs it. Fused into the weight-gradient GEMM
// (Megatron's gradient_accumulation_fusion): no extra pass. A separate pass:
// read the new gradient (16-bit under mixed precision), read and write the
// accumulator (the stack's main-gradient dtype), for every micro-batch after
// the first, on the local (under ZeRO-3 / FSDP: sharded) gradients.
#pragma once
#include "cost/step_context.h"

namespace trainplan::cost {

double grad_accumulation_s(const StepContext& ctx);

}  // namespace trainplan::cost
