// The gradients component: as accumulated and reduced (sharded from ZeRO-2),
// the 16-bit copies beside them, what is left while the optimizer steps, and
// a gathered stage's unsharded gradients.
#include "cost/memory.h"

namespace trainplan::cost {

double gradients_bytes(const StateBytes& s, double params, const spec::Plan& p) {
  // DeepSpeed's ZeRO-2 copies a later micro-batch's partition into a fresh buffer and adds it into
  // the accumulated one at the backward's end: two partitions, priced as held through the step's
  // backward (the fresh one is allocated at its first bucket's reduction).
  const double partitions = p.zero == 2 && p.grad_accum > 1 && s.gradient_partition_per_micro_batch ? 2 : 1;
  return params * s.gradients / (p.zero >= 2 ? p.dp : 1) * partitions + params * s.gradients_16bit;
}

double step_gradients_bytes(const spec::Stack& stack, const StateBytes& s, double params, const spec::Plan& p) {
  // FP16_Optimizer (fp32-grad-casts) frees a 16-bit gradient only after its FP32 cast is flattened.
  if (stack.memory.step_temporaries != spec::StepTemporaries::fp32_grad_shard) return gradients_bytes(s, params, p);
  return params * s.gradients / (p.zero >= 1 ? p.dp : 1);
}

double gathered_gradients_bytes(const StateBytes& s, double params) { return params * s.gradients; }

}  // namespace trainplan::cost
