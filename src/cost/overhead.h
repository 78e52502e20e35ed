// Overhead: the fixed per-step cost outside compute and communication: the
// calibration's fitted per-step overhead (launch, sync, data loading on that
// accelerator) plus the stack's stated host overhead.
#pragma once
#include "cost/step_context.h"

namespace tp::cost {

double overhead_s(const StepContext& ctx);

}  // namespace tp::cost
