// The sharding buffers component: ZeRO-3 / FSDP's gathered and prefetched layer
// weights and unsharded gradients, or none where a pipeline keeps the stage
// gathered through the step.
#include "cost/memory.h"

namespace trainplan::cost {

bool gathered_through_step(const spec::Stack& stack, const spec::Plan& p) {
  return stack.memory.fsdp_gathered_under_pipeline && p.zero >= 3 && p.pp > 1;
}

double sharding_buffers_bytes(const spec::ModelSpec& m, const StateBytes& s, const spec::Plan& p) {
  if (p.zero < 3) return 0;
  const double layer = double(m.layer_parameters()) / p.tp;
  return layer * (2 * s.weights + s.weights);  // gathered + prefetched weights, unsharded gradients
}

}  // namespace trainplan::cost
