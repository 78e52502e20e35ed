// The optimizer states component: Adam's two moments, sharded from ZeRO-1 on.
#include "cost/memory.h"

namespace trainplan::cost {

double optimizer_states_bytes(const StateBytes& s, double params, const spec::Plan& p) {
  return params * s.optimizer / (p.zero >= 1 ? p.dp : 1);
}

}  // namespace trainplan::cost
