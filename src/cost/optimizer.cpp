#include "cost/optimizer.h"

#include "cost/state_bytes.h"

namespace trainplan::cost {

double optimizer_bytes_per_parameter(const spec::Stack& stack, spec::Precision precision) {
  const StateBytes state = state_bytes_per_parameter(stack, precision);
  // Master (or the weights themselves) and moments are read and written; the
  // gradient is read; a separate compute copy is written. Where the step first
  // casts the gradient partition to FP32 (DeepSpeed's BF16 optimizer over a BF16
  // accumulator), the cast reads the gradient and writes the copy, which Adam reads.
  const double master = state.master_weights > 0 ? state.master_weights : state.weights;
  const double copy = state.master_weights > 0 ? state.weights : 0.0;
  return 2 * (master + state.optimizer) + state.gradients + 2 * state.step_grad_partition_cast + copy;
}

double optimizer_s(const StepContext& ctx) {
  const spec::Plan& p = ctx.plan;
  const double local = p.zero >= 1 ? ctx.params_per_device / ctx.dense_dp() + ctx.expert_params_per_device / ctx.expert_dp()
                                   : ctx.params_per_device + ctx.expert_params_per_device;
  return ctx.stream_s(ctx.ops.optimizer, local * optimizer_bytes_per_parameter(ctx.stack, ctx.workload.precision));
}

}  // namespace trainplan::cost
