#include "cost/context_parallel.h"

#include <algorithm>

namespace trainplan::cost {

double kv_chunk_bytes(const StepContext& ctx) {
  const spec::ModelSpec& m = ctx.model;
  return ctx.tokens() * ctx.kv_heads_local() * (m.qk_head_dim() + m.value_head_dim()) * ctx.element_bytes();
}

HeadExchangeBytes head_exchange_bytes(const StepContext& ctx) {
  const spec::ModelSpec& m = ctx.model;
  const double per_head = ctx.tokens() * ctx.element_bytes();
  return {per_head * ctx.heads_local() * m.qk_head_dim(), per_head * ctx.kv_heads_local() * m.qk_head_dim(),
          per_head * ctx.kv_heads_local() * m.value_head_dim(), per_head * ctx.heads_local() * m.value_head_dim()};
}

ContextParallelTime context_parallel(const StepContext& ctx, const LayerCompute& layer) {
  ContextParallelTime t;
  const spec::Plan& p = ctx.plan;
  if (p.cp <= 1) return t;
  const double bytes = kv_chunk_bytes(ctx);
  const net::GroupLayout group{p.cp, p.tp};  // CP next to TP in the rank order
  const spec::CollectiveEfficiency& eff = ctx.calibration.collective;
  const int steps = p.cp - 1;
  if (ctx.stack.communication.context_parallel == spec::ContextParallel::all_to_all) {
    // DeepSpeed 0.16.2 deepspeed/sequence/layer.py:375-384, 405: one _SeqAllToAll each for Q, K, V
    // and the output, on the compute stream (async_op False without an sp_stream, :265-266); its
    // backward (:293-297) runs the same exchange on the gradients.
    const HeadExchangeBytes x = head_exchange_bytes(ctx);
    double pass = 0;
    for (double b : {x.q, x.k, x.v, x.out}) pass += ctx.cluster.all_to_all_seconds(b, group, p.instances, eff);
    t.forward_s = pass;
    t.backward_s = pass;
  } else if (ctx.stack.communication.context_parallel == spec::ContextParallel::all_gather) {
    const double gather = ctx.cluster.seconds(net::Collective::all_gather, bytes * p.cp, group, p.instances, eff);
    t.forward_s = gather;
    t.backward_s = gather + ctx.cluster.seconds(net::Collective::reduce_scatter, bytes * p.cp, group, p.instances, eff);
  } else {
    // Every rank sends at once, to its ring neighbour.
    const double send_fwd = ctx.cluster.seconds(net::Collective::point_to_point, bytes, group, p.instances, eff);
    const double send_bwd = ctx.cluster.seconds(net::Collective::point_to_point, 2 * bytes, group, p.instances, eff);
    const double step_fwd = layer.attention_forward_s / p.cp, step_bwd = layer.attention_backward_s / p.cp;
    t.forward_s = steps * std::max(0.0, send_fwd - step_fwd);
    t.backward_s = steps * std::max(0.0, send_bwd - step_bwd);
  }
  if (p.recompute == spec::Recompute::selective) t.recompute_s = t.forward_s;
  if (p.recompute == spec::Recompute::full) t.recompute_s = t.forward_s * ctx.full_recompute_share();
  return t;
}

}  // namespace trainplan::cost
