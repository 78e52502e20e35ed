#include "cost/expert_parallel.h"

namespace tp::cost {

double dispatch_bytes(const StepContext& ctx) {
  const spec::ModelSpec& m = ctx.model;
  if (!m.moe()) return 0;
  return ctx.sp_tokens() * m.top_k * ctx.expert_load() * m.hidden * ctx.element_bytes();
}

ExpertParallelTime expert_parallel(const StepContext& ctx) {
  ExpertParallelTime t;
  const spec::Plan& p = ctx.plan;
  const int etp = p.etp > 0 ? p.etp : p.tp;
  if (!ctx.model.moe() || (p.ep <= 1 && etp <= 1)) return t;
  const double bytes = dispatch_bytes(ctx);
  // The expert grid is ETP innermost, then EP (spec/plan.h).
  const double a2a = ctx.cluster.all_to_all_seconds(bytes, {p.ep, etp}, p.instances, ctx.calibration.collective);
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
  if (p.recompute == spec::Recompute::full) t.recompute_s = per_pass;
  return t;
}

}  // namespace tp::cost
