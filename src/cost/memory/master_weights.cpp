// The master weights component: the FP32 copy mixed precision keeps, sharded
// from ZeRO-1 on (Rajbhandari et al. 2020, ZeRO, section 5).
#include "cost/memory.h"

namespace trainplan::cost {

double master_weights_bytes(const StateBytes& s, double params, const spec::Plan& p) {
  return params * s.master_weights / (p.zero >= 1 ? p.dp : 1);
}

}  // namespace trainplan::cost
