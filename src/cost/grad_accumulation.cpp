#include "cost/grad_accumulation.h"

#include "cost/state_bytes.h"

namespace trainplan::cost {

double grad_accumulation_s(const StepContext& ctx) {
  const spec::Plan& p = ctx.plan;
  if (ctx.stack.compute.grad_accumulation == spec::GradAccumulation::fused_wgrad || p.grad_accum <= 1) return 0;
  const double local = p.zero == 3 ? ctx.params_per_device / ctx.dense_dp() + ctx.expert_params_per_device / ctx.expert_dp()
                                   : ctx.params_per_device + ctx.expert_params_per_device;
  // The new gradient arrives in the compute dtype (the 16-bit parameters' .grad
  // under mixed precision) and is added into the accumulator in its own dtype.
  const double new_gradient_bytes = ctx.element_bytes();
  const double bytes = local * (new_gradient_bytes + 2 * gradient_element_bytes(ctx.stack, ctx.workload.precision));
  return (p.grad_accum - 1) * ctx.stream_s(ctx.ops.residual, bytes);
}

}  // namespace trainplan::cost
