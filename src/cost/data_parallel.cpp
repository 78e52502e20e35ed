#include "cost/data_parallel.h"

#include <algorithm>

#include "cost/state_bytes.h"

namespace trainplan::cost {

DataParallelTime data_parallel(const StepContext& ctx, double rank_forward_s, double rank_backward_s,
                               double rank_layers) {
  DataParallelTime t;
  const spec::Plan& p = ctx.plan;
  const int dense_dp = ctx.dense_dp(), expert_dp = ctx.expert_dp();
  if (dense_dp <= 1 && (expert_dp <= 1 || ctx.expert_params_per_device == 0)) return t;
  using net::Collective;
  // Dense parameters reduce over DP x CP (stride TP); routed experts over their
  // own data-parallel group (stride expert TP x EP). Both groups run one after
  // the other through the same buckets, so their times add.
  const net::GroupLayout dense_group{dense_dp, p.tp};
  const net::GroupLayout expert_group{expert_dp, spec::expert_tp(p) * p.ep};
  const double params = ctx.params_per_device + ctx.expert_params_per_device;
  // The buffer's bytes set the last bucket's share; the collective moves the
  // stack's reduction dtype where it casts the buffer for it.
  const double grad_bytes = params * gradient_element_bytes(ctx.stack, ctx.workload.precision);
  const double element = reduction_element_bytes(ctx.stack, ctx.workload.precision);
  auto seconds = [&](Collective c, double bytes_per_param) {
    return ctx.cluster.seconds(c, ctx.params_per_device * bytes_per_param, dense_group, p.instances,
                               ctx.calibration.collective) +
           (ctx.expert_params_per_device > 0
                ? ctx.cluster.seconds(c, ctx.expert_params_per_device * bytes_per_param, expert_group, p.instances,
                                      ctx.calibration.collective)
                : 0.0);
  };
  const double e = ctx.gathered_parameter_bytes();
  const double mb = ctx.micro_batches();
  // Share of the gradients in the last bucket: one bucket of the stack's size,
  // or one layer's worth when the stack reduces per layer (FSDP units).
  const double bucket_bytes = ctx.stack.communication.dp_bucket_bytes;
  const double last_share = bucket_bytes > 0 ? std::min(1.0, bucket_bytes / grad_bytes)
                                             : 1.0 / std::max(1.0, rank_layers);
  const bool overlap_reduce = p.overlap_dp_comm && ctx.stack.communication.overlap_dp_grad_reduce;
  const bool overlap_gather = p.overlap_dp_comm && ctx.stack.communication.overlap_dp_param_gather;
  auto hidden_behind = [](double comm_s, double compute_s, double unhidden_share) {
    return std::max(comm_s * unhidden_share, comm_s - compute_s);
  };

  if (p.zero == 3) {
    // Every micro-batch gathers the weights for forward and again for
    // backward, and reduce-scatters its gradients into the shards.
    const double gather = seconds(Collective::all_gather, e);
    const double reduce = seconds(Collective::reduce_scatter, element);
    t.total_s = mb * (2 * gather + reduce);
    // What overlaps hides behind the pass it runs beside, the last bucket
    // excepted; what does not blocks. Without prefetch each module's backward
    // gather blocks while its gradients reduce-scatter on a side stream behind
    // the backward that follows (DeepSpeed's overlap_comm); a blocking
    // reduction waits even where the gathers are prefetched.
    const double first = overlap_gather ? hidden_behind(gather, rank_forward_s, last_share) : gather;
    const double back = overlap_gather && overlap_reduce ? hidden_behind(gather + reduce, rank_backward_s, last_share)
                        : overlap_gather                 ? hidden_behind(gather, rank_backward_s, last_share) + reduce
                        : overlap_reduce                 ? gather + hidden_behind(reduce, rank_backward_s, last_share)
                                                         : gather + reduce;
    t.exposed_s = mb * (first + back);
    return t;
  }
  const bool all_reduce = p.zero == 0 || ctx.stack.communication.zero_grad_reduce_all_reduce;
  const double reduce = all_reduce ? seconds(Collective::all_reduce, element)
                                   : seconds(Collective::reduce_scatter, element);
  const double gather = p.zero == 0 ? 0.0 : seconds(Collective::all_gather, e);
  // Once per step, or after every micro-batch's backward / before every forward
  // where the stack does it then (DeepSpeed's ZeRO-2, FSDP's SHARD_GRAD_OP).
  const double reductions = ctx.stack.communication.dp_grad_reduce_every_micro_batch ? mb : 1.0;
  const double gathers = ctx.stack.communication.dp_param_gather_every_micro_batch ? mb : 1.0;
  t.total_s = reductions * reduce + gathers * gather;
  // Gradients of a micro-batch's backward stream out while it runs; the
  // updated parameters are gathered behind the next step's first forward.
  t.exposed_s = reductions * (overlap_reduce ? hidden_behind(reduce, rank_backward_s, last_share) : reduce) +
                gathers * (overlap_gather ? hidden_behind(gather, rank_forward_s, last_share) : gather);
  return t;
}

}  // namespace trainplan::cost
