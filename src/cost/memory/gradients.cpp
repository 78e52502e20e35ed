// The gradients component: as accumulated and reduced (sharded from ZeRO-2),
// the 16-bit copies beside them, what is left while the optimizer steps, and
// a gathered stage's unsharded gradients.
#include "cost/memory.h"

namespace trainplan::cost {

double gradients_bytes(const StateBytes& s, double params, const spec::Plan& p) {
  return params * s.gradients / (p.zero >= 2 ? p.dp : 1) + params * s.gradients_16bit;
}

double step_gradients_bytes(const spec::Stack& stack, const StateBytes& s, double params, const spec::Plan& p) {
  // FP16_Optimizer (fp32-grad-casts) frees a 16-bit gradient only after its FP32 cast is flattened.
  if (stack.memory.step_temporaries != spec::StepTemporaries::fp32_grad_shard) return gradients_bytes(s, params, p);
  return params * s.gradients / (p.zero >= 1 ? p.dp : 1);
}

double gathered_gradients_bytes(const StateBytes& s, double params) { return params * s.gradients; }

}  // namespace trainplan::cost
