#include "cost/tensor_parallel.h"

#include <algorithm>

namespace trainplan::cost {

TensorParallelTime tensor_parallel(const StepContext& ctx, const LayerCompute& layer) {
  TensorParallelTime t;
  const spec::Plan& p = ctx.plan;
  if (p.tp <= 1) return t;
  using net::Collective;
  const net::GroupLayout group{p.tp, 1};
  const double bytes = ctx.tokens() * ctx.model.hidden * ctx.element_bytes();
  auto seconds = [&](Collective c, double b) { return ctx.cluster.seconds(c, b, group, p.instances, ctx.calibration.collective); };
  // Under FP8, Transformer Engine's LayerNormLinear quantizes the norm output
  // and all-gathers that FP8 tensor, the same one it saves for the weight
  // gradient (TransformerEngine@v1.4 module/layernorm_linear.py:125-154,
  // @v2.5 :189-254 gather_along_first_dim(ln_out, quantizer=...)): one byte
  // per element. The reduce-scatters and the backward's gathers stay BF16.
  const bool fp8_gather = p.sp && ctx.workload.precision == spec::Precision::fp8 && ctx.stack.memory.fp8_saves_gemm_inputs_in_fp8;
  const double gather_bytes = fp8_gather ? ctx.tokens() * ctx.model.hidden * 1.0 : bytes;
  const double forward_pair = p.sp ? seconds(Collective::all_gather, gather_bytes) + seconds(Collective::reduce_scatter, bytes)
                                   : seconds(Collective::all_reduce, bytes);
  const double backward_pair = p.sp ? seconds(Collective::all_gather, bytes) + seconds(Collective::reduce_scatter, bytes)
                                    : seconds(Collective::all_reduce, bytes);
  // One pair around attention and one around the MLP; a MoE layer's routed
  // tokens travel with the dispatcher instead (cost/expert_parallel.h), so only
  // its shared experts, when it has any, keep the MLP's pair.
  const double moe = ctx.moe_share();
  const double pairs = 1 + (1 - moe) + (ctx.model.shared_expert_ffn_hidden > 0 ? moe : 0.0);
  t.forward_s = pairs * forward_pair;
  t.backward_s = pairs * backward_pair;
  // Separate gate and up layers each move the MLP's input (a dense SwiGLU MLP,
  // or the shared experts'): one more gather forward under SP, and backward one
  // more gather and one more input-gradient reduction.
  if (ctx.stack.communication.gate_up_separate_linears && ctx.model.mlp == spec::MlpKind::swiglu) {
    const double mlps = pairs - 1;
    if (p.sp) {
      t.forward_s += mlps * seconds(Collective::all_gather, gather_bytes);
      t.backward_s += mlps * (seconds(Collective::all_gather, bytes) + seconds(Collective::reduce_scatter, bytes));
    } else {
      t.backward_s += mlps * seconds(Collective::all_reduce, bytes);
    }
  }
  // Full recompute re-runs the forward's collectives; a stack that stops at the
  // last saved tensor (spec::FullRecompute) leaves out the dense MLP's closing
  // one, after its last GEMM: the reduce-scatter under SP, else the all-reduce.
  double recompute_raw = 0;
  if (p.recompute == spec::Recompute::full) {
    recompute_raw = t.forward_s;
    if (ctx.stack.capabilities.full == spec::FullRecompute::until_last_saved)
      recompute_raw -= (1 - moe) * (p.sp ? seconds(Collective::reduce_scatter, bytes) : seconds(Collective::all_reduce, bytes));
  }
  t.recompute_s = recompute_raw;
  if (p.overlap_tp_comm) {  // async TP hides collectives behind the layer's independent GEMM chunks
    t.forward_s = std::max(0.0, t.forward_s - layer.gemm_forward_s);
    t.backward_s = std::max(0.0, t.backward_s - layer.gemm_backward_s);
    t.recompute_s = std::max(0.0, recompute_raw - (layer.gemm_forward_s - layer.gemm_not_recomputed_s));
  }
  t.embedding_s = seconds(Collective::all_reduce, bytes);
  if (p.sp) t.head_s = seconds(Collective::all_gather, bytes);
  return t;
}

}  // namespace trainplan::cost
