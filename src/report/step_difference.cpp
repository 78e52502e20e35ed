#include "report/step_difference.h"

namespace tp::report {

StepDifference largest_step_difference(const cost::StepBreakdown& a, const cost::StepBreakdown& b) {
  const std::pair<const char*, double> parts[] = {
      {"forward compute", b.forward_compute_s - a.forward_compute_s},
      {"backward compute (with recompute)", b.backward_compute_s - a.backward_compute_s},
      {"TP communication exposed", b.tp_comm_exposed_s - a.tp_comm_exposed_s},
      {"CP communication exposed", b.cp_comm_exposed_s - a.cp_comm_exposed_s},
      {"EP communication exposed", b.ep_comm_exposed_s - a.ep_comm_exposed_s},
      {"PP communication exposed", b.pp_comm_exposed_s - a.pp_comm_exposed_s},
      {"pipeline bubble", b.pipeline_bubble_s - a.pipeline_bubble_s},
      {"DP communication exposed", b.dp_comm_exposed_s - a.dp_comm_exposed_s},
      {"gradient accumulation", b.grad_accumulation_s - a.grad_accumulation_s},
      {"optimizer", b.optimizer_s - a.optimizer_s},
      {"overhead", b.overhead_s - a.overhead_s}};
  StepDifference out;
  for (const auto& [part, seconds] : parts)
    if (seconds > out.seconds) out = {part, seconds};
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

}  // namespace tp::report
