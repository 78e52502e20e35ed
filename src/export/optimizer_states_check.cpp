#include "export/optimizer_states_check.h"

#include <algorithm>

namespace trainplan::exporting {

void check_optimizer_states(const LaunchJob& job, const Refusal& refuse, const std::string& option,
                            const std::string& client, std::initializer_list<spec::OptimizerStates> kept,
                            const std::string& advice) {
  const spec::Precision precision = job.workload.precision;
  if (precision != spec::Precision::mixed_bf16 && precision != spec::Precision::fp8) return;
  if (std::find(kept.begin(), kept.end(), job.optimizer) != kept.end()) return;
  std::string keeps;
  for (const spec::OptimizerStates& k : kept) keeps += (keeps.empty() ? "" : ", or ") + spec::describe(k);
  refuse(option, client + " keeps " + keeps + "; stack " + (job.stack_name.empty() ? "(unnamed)" : job.stack_name) +
                     " prices " + spec::describe(job.optimizer) + (advice.empty() ? "" : "; " + advice));
}

}  // namespace trainplan::exporting
