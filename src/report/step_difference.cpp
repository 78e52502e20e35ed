#include "report/step_difference.h"

namespace trainplan::report {

StepDifference largest_step_difference(const cost::StepBreakdown& a, const cost::StepBreakdown& b) {
  StepDifference out;
  for (const cost::StepPart& part : cost::kStepParts)
    if (const double seconds = b.*part.seconds - a.*part.seconds; seconds > out.seconds) out = {part.label, seconds};
  return out;
}

cost::StepBreakdown scaled(const cost::StepBreakdown& b, double f) {
  cost::StepBreakdown out = b;
  for (double* x : {&out.forward_compute_s, &out.backward_compute_s, &out.recompute_s, &out.memory_bound_s,
                    &out.tp_comm_exposed_s, &out.cp_comm_exposed_s, &out.ep_comm_exposed_s, &out.pp_comm_exposed_s, &out.pipeline_bubble_s, &out.dp_comm_exposed_s,
                    &out.dp_comm_total_s, &out.grad_accumulation_s, &out.optimizer_s, &out.overhead_s, &out.step_s})
    *x *= f;
  return out;
}

}  // namespace trainplan::report
