// The optimizer temporaries component: what the optimizer step allocates on top
// of the states (a foreach Adam's intermediate, DeepSpeed's flat shard copies,
// FP16_Optimizer's FP32 casts and their flat copy, the BF16 optimizer's FP32 cast
// of its partition).
#include <algorithm>

#include "cost/memory.h"

namespace trainplan::cost {

double optimizer_temporaries_bytes(const spec::Stack& stack, const StateBytes& s, double params,
                                   const spec::Plan& p) {
  const double shards = p.zero >= 1 ? p.dp : 1;
  switch (stack.memory.step_temporaries) {
    case spec::StepTemporaries::none: return 0;
    case spec::StepTemporaries::foreach: return params * (s.master_weights > 0 ? s.master_weights : s.weights) / shards;
    case spec::StepTemporaries::fp32_grad_shard: {
      const double shard = params / shards, group = stack.memory.optimizer_sub_group_parameters;
      return (group > 0 ? std::min(shard, group) : shard) * s.step_grad_shard_copy;
    }
    case spec::StepTemporaries::fp32_grad_casts: return params / shards * s.step_grad_casts;
    case spec::StepTemporaries::fp32_grad_partition: return params / shards * s.step_grad_partition_cast;
  }
  return 0;
}

}  // namespace trainplan::cost
