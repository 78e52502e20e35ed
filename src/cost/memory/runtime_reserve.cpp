// The runtime reserve component: the runtime's context and one communicator's
// buffers per parallel group of more than one rank.
#include "cost/memory.h"

namespace trainplan::cost {

double runtime_reserve_bytes(const spec::Stack& stack, const spec::Plan& p) {
  const int groups = (p.tp > 1) + (p.pp > 1) + (p.dp > 1) + (p.cp > 1) + (p.ep > 1);
  return stack.memory.runtime_reserve_bytes + groups * stack.memory.communicator_bytes;
}

}  // namespace trainplan::cost
