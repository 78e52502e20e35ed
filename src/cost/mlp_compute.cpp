#include "cost/mlp_compute.h"

#include <tuple>
#include <utility>

namespace trainplan::cost {

double routed_rows(const StepContext& ctx) {
  if (!ctx.model.moe()) return 0;
  return ctx.sp_tokens() * ctx.model.top_k * spec::expert_tp(ctx.plan) * ctx.expert_load();
}

MlpGemms mlp_compute(const StepContext& ctx, double& gemm_forward_s, double& gemm_backward_s) {
  const spec::ModelSpec& m = ctx.model;
  const double t = ctx.plan.tp, h = m.hidden, tokens = ctx.tokens();
  const bool swiglu = m.mlp == spec::MlpKind::swiglu;
  const double linear = ctx.linear_peak_flops_per_s();
  // Up (with the gate for SwiGLU) and down projections of `copies` MLPs of
  // width ffn_local over `rows` tokens, weighted by the share of layers.
  // Returns the up and down GEMMs of one.
  auto mlp = [&](double rows, double ffn_local, double copies) {
    double forward = 0, backward = 0;
    const GemmTime up = add_gemm(ctx, linear, rows, ffn_local * (swiglu ? 2 : 1), h, forward, backward);
    const GemmTime down = add_gemm(ctx, linear, rows, h, ffn_local, forward, backward);
    gemm_forward_s += copies * forward;
    gemm_backward_s += copies * backward;
    return std::pair{up, down};
  };
  MlpGemms gemms;
  const double moe = ctx.moe_share();
  if (moe < 1) std::tie(gemms.dense_up, gemms.dense_down) = mlp(tokens, m.ffn_hidden / t, 1 - moe);
  if (moe == 0) return gemms;
  // The router scores every token against every expert, in BF16 (not FP8).
  double forward = 0, backward = 0;
  add_gemm(ctx, ctx.peak_flops_per_s(), ctx.sp_tokens(), m.experts, h, forward, backward);
  gemm_forward_s += moe * forward;
  gemm_backward_s += moe * backward;
  if (m.shared_expert_ffn_hidden > 0) gemms.shared_up = mlp(tokens, m.shared_expert_ffn_hidden / t, moe).first;
  // Routed experts: this rank's experts / EP, each on its share of the rows,
  // split over expert TP (grouped GEMMs priced as one GEMM per expert).
  const double local_experts = double(m.experts) / ctx.plan.ep;
  const double etp = spec::expert_tp(ctx.plan);
  mlp(routed_rows(ctx) / local_experts, m.expert_ffn_hidden / etp, moe * local_experts);
  return gemms;
}

double mlp_intermediate_elements(const StepContext& ctx) {
  const spec::ModelSpec& m = ctx.model;
  const double t = ctx.plan.tp, tokens = ctx.tokens(), moe = ctx.moe_share();
  double elements = (1 - moe) * tokens * m.ffn_hidden / t;
  if (moe > 0)
    elements += moe * (tokens * m.shared_expert_ffn_hidden / t +
                       routed_rows(ctx) * m.expert_ffn_hidden / spec::expert_tp(ctx.plan));
  return elements;
}

double moe_memory_s(const StepContext& ctx) {
  if (!ctx.model.moe()) return 0;
  // Permute before the experts and un-permute after: each reads and writes
  // every routed row of width h.
  const double bytes = 2 * 2 * routed_rows(ctx) * ctx.model.hidden * ctx.element_bytes();
  return ctx.moe_share() * ctx.stream_s(ctx.ops.residual, bytes);
}

}  // namespace trainplan::cost
