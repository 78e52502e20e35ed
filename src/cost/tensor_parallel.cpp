#include "cost/tensor_parallel.h"

#include <algorithm>

namespace tp::cost {

TensorParallelTime tensor_parallel(const StepContext& ctx, const LayerCompute& layer) {
  TensorParallelTime t;
  const spec::Plan& p = ctx.plan;
  if (p.tp <= 1) return t;
  using net::Collective;
  const net::GroupLayout group{p.tp, 1};
  const double bytes = ctx.tokens() * ctx.model.hidden * ctx.element_bytes();
  auto seconds = [&](Collective c) { return ctx.cluster.seconds(c, bytes, group, p.instances, ctx.calibration.collective); };
  const double pair = p.sp ? seconds(Collective::all_gather) + seconds(Collective::reduce_scatter)
                           : seconds(Collective::all_reduce);
  // One pair around attention and one around the MLP; a MoE layer's routed
  // tokens travel with the dispatcher instead (cost/expert_parallel.h), so only
  // its shared experts, when it has any, keep the MLP's pair.
  const double moe = ctx.moe_share();
  const double pairs = 1 + (1 - moe) + (ctx.model.shared_expert_ffn_hidden > 0 ? moe : 0.0);
  t.forward_s = pairs * pair;
  t.backward_s = pairs * pair;
  if (p.overlap_tp_comm) {  // async TP hides collectives behind the layer's independent GEMM chunks
    t.forward_s = std::max(0.0, t.forward_s - layer.gemm_forward_s);
    t.backward_s = std::max(0.0, t.backward_s - layer.gemm_backward_s);
  }
  if (p.recompute == spec::Recompute::full) t.recompute_s = t.forward_s;
  t.embedding_s = seconds(Collective::all_reduce);
  if (p.sp) t.head_s = seconds(Collective::all_gather);
  return t;
}

}  // namespace tp::cost
