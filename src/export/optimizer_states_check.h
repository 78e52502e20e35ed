// Whether a format's client keeps the optimizer state the plan was priced with:
// mixed-precision jobs (BF16 or FP8 GEMMs) whose LaunchJob::optimizer is not
// one the client keeps are refused, naming the client's option and what the
// stack prices; FP32 and BF16-SR jobs keep no such state and always pass.
#pragma once
#include <initializer_list>
#include <string>

#include "export/launch_job.h"
#include "export/refusal.h"

namespace trainplan::exporting {

void check_optimizer_states(const LaunchJob& job, const Refusal& refuse, const std::string& option,
                            const std::string& client, std::initializer_list<spec::OptimizerStates> kept,
                            const std::string& advice = "");

}  // namespace trainplan::exporting
