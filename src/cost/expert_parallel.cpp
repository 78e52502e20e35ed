#include "cost/expert_parallel.h"

#include <algorithm>

namespace trainplan::cost {

double instances_reached_per_token(int experts, int top_k, int instances) {
  if (instances <= 1) return 0;
  // Experts spread evenly: a token misses one other instance when all top_k
  // picks fall among the experts elsewhere, C(E - E/N, k) / C(E, k).
  const double per_instance = double(experts) / instances;
  double miss = 1;
  for (int i = 0; i < top_k; ++i) miss *= std::max(0.0, (experts - per_instance - i) / (experts - i));
  return (instances - 1) * (1 - miss);
}

double dispatch_bytes(const StepContext& ctx) {
  const spec::ModelSpec& m = ctx.model;
  if (!m.moe()) return 0;
  return ctx.sp_tokens() * m.top_k * ctx.expert_load() * m.hidden * ctx.element_bytes();
}

double ep_overlap_paired_share(const spec::Plan& p) {
  // NVIDIA/Megatron-LM@d98e8a64 transformer_config.py:3002-3025 accepts the
  // overlap only with EP > 1, without full recompute and, under a pipeline,
  // with virtual stages; elsewhere the recipe cannot set it and the exchange
  // stays exposed.
  if (p.ep <= 1 || p.recompute == spec::Recompute::full || (p.pp > 1 && p.virtual_stages <= 1)) return 0;
  const double passes = double(std::max(1, p.grad_accum)) * p.virtual_stages;
  // combined_1f1b.py:76-131: without a pipeline the first forward and the last
  // backward run alone. schedules.py:955-975 get_pp_rank_microbatches: under
  // an interleaved pipeline rank r warms up with (pp - r - 1) * 2 + (vp - 1) *
  // pp forwards, one more with the overlap; the first stage has the most.
  const double unpaired = p.pp == 1 ? 1.0 : 2.0 * (p.pp - 1) + double(p.virtual_stages - 1) * p.pp + 1;
  return std::max(0.0, 1 - unpaired / passes);
}

ExpertParallelTime expert_parallel(const StepContext& ctx, const LayerCompute& layer) {
  ExpertParallelTime t;
  const spec::Plan& p = ctx.plan;
  const int etp = spec::expert_tp(p);
  if (!ctx.model.moe() || (p.ep <= 1 && etp <= 1)) return t;
  const double bytes = dispatch_bytes(ctx);
  // The expert grid is ETP innermost, then EP (spec/plan.h).
  const net::GroupLayout grid{p.ep, etp};
  const int devices = ctx.cluster.devices_per_instance();
  const int spanned = p.ep * etp > devices ? p.ep * etp / devices : 1;
  double a2a = 0;
  if (ctx.stack.communication.dispatch_once_per_instance && spanned > 1) {
    // Every copy still reaches its expert over the fabric (sent there, or
    // forwarded by the instance that received it); EFA carries one copy per
    // token and other instance it reaches.
    const spec::ModelSpec& m = ctx.model;
    const double efa = bytes / m.top_k * instances_reached_per_token(m.experts, m.top_k, spanned);
    a2a = ctx.cluster.all_to_all_seconds(bytes * (p.ep - 1) / p.ep, efa, grid, p.instances, ctx.calibration.collective);
  } else {
    a2a = ctx.cluster.all_to_all_seconds(bytes, grid, p.instances, ctx.calibration.collective);
  }
  // Inside expert TP, each rank gathers its group's routed tokens before the
  // experts and reduce-scatters their outputs after.
  double etp_pair = 0;
  if (etp > 1) {
    const net::GroupLayout group{etp, 1};
    etp_pair = ctx.cluster.seconds(net::Collective::all_gather, bytes * etp, group, p.instances, ctx.calibration.collective) +
               ctx.cluster.seconds(net::Collective::reduce_scatter, bytes * etp, group, p.instances, ctx.calibration.collective);
  }
  const double per_pass = ctx.moe_share() * (2 * a2a + etp_pair);  // dispatch + combine
  t.forward_s = per_pass;
  t.backward_s = per_pass;
  if (p.recompute == spec::Recompute::full) t.recompute_s = per_pass * ctx.full_recompute_share();
  // Paired passes (combined_1f1b.py:55-57): a forward's all-to-alls run beside
  // the other micro-batch's backward compute of a layer, and the backward's
  // beside its forward compute; a share of them hides, at most that compute.
  const double stack_share = ctx.stack.communication.ep_a2a_hidden_share;
  const double hidden_share = stack_share > 0 ? stack_share * ep_overlap_paired_share(p) : 0.0;
  if (hidden_share > 0) {
    t.forward_s -= hidden_share * std::min(t.forward_s, layer.backward_s());
    t.backward_s -= hidden_share * std::min(t.backward_s, layer.forward_s());
  }
  return t;
}

}  // namespace trainplan::cost
