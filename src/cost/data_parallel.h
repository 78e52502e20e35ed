// Data parallel: gradient reduction across DP replicas (all-reduce; under ZeRO
// / a distributed optimizer a reduce-scatter plus the parameter all-gather;
// under ZeRO-3 / FSDP gathers and reduce-scatters every micro-batch), and what
// the stack hides behind compute. The last gradient bucket is reduced after
// the last backward ends, so it never hides.
#pragma once
#include "cost/step_context.h"

namespace trainplan::cost {

struct DataParallelTime {
  double total_s = 0;    // before overlap
  double exposed_s = 0;  // on the step's critical path
};

// rank_*_s: one micro-batch's forward / backward on the busiest pipeline rank;
// rank_layers: transformer layers on that rank.
DataParallelTime data_parallel(const StepContext& ctx, double rank_forward_s, double rank_backward_s,
                               double rank_layers);

}  // namespace trainplan::cost
