#include "cost/overhead.h"

#include <algorithm>

namespace trainplan::cost {

double overhead_s(const StepContext& ctx) { return ctx.calibration.step_overhead_s + ctx.stack.compute.host_overhead_s; }

double host_tracing_exposed_s(const StepContext& ctx, double rank_layers, double micro_batches, double device_s) {
  if (!ctx.stack.compute.lazy_tracing) return 0;
  const double host_s = micro_batches * rank_layers * ctx.calibration.host_trace_s_per_layer;
  if (ctx.stack.compute.host_waits_every_micro_batch) return host_s;  // recorded while the device idles
  return std::max(0.0, host_s - device_s);
}

double sync_launch_gaps_s(const StepContext& ctx, double device_s) {
  const double share = ctx.stack.compute.sync_launch_share;
  return share / (1 - share) * device_s;
}

}  // namespace trainplan::cost
