#include "cost/overhead.h"

namespace tp::cost {

double overhead_s(const StepContext& ctx) { return ctx.calibration.step_overhead_s + ctx.stack.host_overhead_s; }

}  // namespace tp::cost
