#include "spec/optimizer_states.h"

namespace trainplan::spec {

OptimizerStates optimizer_states(const StackMemory& memory) {
  return {memory.master_weight_bytes, memory.optimizer_state_bytes};
}

std::string describe(const OptimizerStates& s) {
  const std::string master = s.master_bytes == 0   ? "no master weights"
                             : s.master_bytes == 2 ? "FP32 master weights kept as 16-bit remainders"
                                                   : "FP32 master weights";
  return master + " and " + (s.moment_bytes == 4 ? "BF16" : "FP32") + " Adam moments";
}

}  // namespace trainplan::spec
