#include "cost/grad_accumulation.h"

#include "cost/data_parallel.h"

namespace tp::cost {

double grad_accumulation_s(const StepContext& ctx) {
  const spec::Plan& p = ctx.plan;
  if (ctx.stack.grad_accumulation == spec::GradAccumulation::fused_wgrad || p.grad_accum <= 1) return 0;
  const double local = ctx.params_per_device / (p.zero == 3 ? p.dp : 1);
  const double bytes = 3 * local * gradient_element_bytes(ctx.stack, ctx.workload.precision);
  return (p.grad_accum - 1) * ctx.stream_s(ctx.ops.residual, bytes);
}

}  // namespace tp::cost
