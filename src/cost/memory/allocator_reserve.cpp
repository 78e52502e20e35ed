// The allocator reserve: what the caching allocator holds beyond the live
// tensors, here the cache it keeps through an optimizer step that allocates.
#include "cost/memory.h"

namespace trainplan::cost {

double cached_through_step_bytes(const spec::Stack& stack, double backward_tensors_bytes, double temporaries_bytes) {
  if (temporaries_bytes <= 0) return 0;
  return (1 + stack.memory.allocator_overhead_fraction) * backward_tensors_bytes + temporaries_bytes;
}

}  // namespace trainplan::cost
