#include "cost/overhead.h"

#include <algorithm>

namespace trainplan::cost {

double overhead_s(const StepContext& ctx) { return ctx.calibration.step_overhead_s + ctx.stack.compute.host_overhead_s; }

double host_tracing_exposed_s(const StepContext& ctx, double rank_layers, double micro_batches, double device_s) {
  const double host_s =
      ctx.stack.compute.lazy_tracing ? micro_batches * rank_layers * ctx.calibration.host_trace_s_per_layer : 0.0;
  // A synchronous launch: the device idles while the host prepares each next
  // graph, which an asynchronous launch hides behind the device's run of this
  // one; stated as the share of the asynchronous latency it adds back.
  const double share = ctx.stack.compute.sync_launch_share;
  return std::max(0.0, host_s - device_s) + share / (1 - share) * device_s;
}

}  // namespace trainplan::cost
