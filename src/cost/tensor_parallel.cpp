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
  // Under FP8 every sequence-parallel all-gather moves an FP8 tensor, one byte
  // per element; the reduce-scatters move BF16 GEMM outputs. Forward,
  // Transformer Engine's LayerNormLinear quantizes the norm output and gathers
  // that, the tensor it saves for the weight gradient (TransformerEngine@v1.4
  // module/layernorm_linear.py:125-154, @v2.5 :189-254 gather_along_first_dim
  // (ln_out, quantizer=...)); backward, the row-parallel layer casts its output
  // gradient to FP8 before gathering it (@v1.8 module/base.py:674-689
  // grad_output_preprocess: cast_to_fp8, then gather_along_first_dim; @v2.5
  // base.py:1076-1105 with the quantizer) and the column-parallel layer
  // re-gathers its saved FP8 input for the weight gradient (@v1.8
  // layernorm_linear.py:444, @v2.5 :648).
  const bool fp8_gather = p.sp && ctx.workload.precision == spec::Precision::fp8 && ctx.stack.memory.fp8_saves_gemm_inputs_in_fp8;
  const double gather_bytes = fp8_gather ? ctx.tokens() * ctx.model.hidden * 1.0 : bytes;
  const double gather_s = seconds(Collective::all_gather, gather_bytes);
  const double forward_pair = p.sp ? gather_s + seconds(Collective::reduce_scatter, bytes) : seconds(Collective::all_reduce, bytes);
  const double backward_pair = forward_pair;
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
  const bool separate_gate_up = ctx.stack.communication.gate_up_separate_linears && ctx.model.mlp == spec::MlpKind::swiglu;
  if (separate_gate_up) {
    const double mlps = pairs - 1;
    if (p.sp) {
      t.forward_s += mlps * gather_s;
      t.backward_s += mlps * (gather_s + seconds(Collective::reduce_scatter, bytes));
    } else {
      t.backward_s += mlps * seconds(Collective::all_reduce, bytes);
    }
  }
  // A stack whose column-parallel layers launch their backward collectives
  // asynchronously (spec::TpBackwardOverlap) hides them behind that layer's own
  // GEMMs. Megatron-LM since 2021-09 (NVIDIA/Megatron-LM@d898a899
  // megatron/mpu/layers.py:239-310, @d98e8a64 megatron/core/tensor_parallel/
  // layers.py:637-808) and Transformer Engine (@v1.4 module/layernorm_linear.py
  // :360-370, :440-452, :528-535): under SP the saved input's re-gather for the
  // weight gradient (one all-gather more than the pair above prices) beside the
  // input-gradient GEMM, and the input gradient's reduce-scatter beside the
  // weight-gradient GEMM; without SP the input gradient's all-reduce beside the
  // weight-gradient GEMM. Each hides at most the GEMM it runs beside. The
  // row-parallel layer's gather under SP (the backward of its forward
  // reduce-scatter) blocks before its GEMMs. Async TP (overlap_tp_comm)
  // replaces these layers' communication and is priced below instead.
  const spec::TpBackwardOverlap overlap = ctx.stack.communication.tp_backward_overlap;
  if (!p.overlap_tp_comm && (overlap == spec::TpBackwardOverlap::always ||
                             (overlap == spec::TpBackwardOverlap::sequence_parallel && p.sp))) {
    const double gather = gather_s, scatter = seconds(Collective::reduce_scatter, bytes);
    const double reduce = seconds(Collective::all_reduce, bytes);
    // `linears` column-parallel layers that split one GEMM evenly (separate gate and up).
    auto column = [&](const GemmTime& g, double linears) {
      const double dgrad = g.dgrad_s / linears, wgrad = g.wgrad_s / linears;
      return linears * (p.sp ? std::max(0.0, gather - dgrad) + std::max(0.0, scatter - wgrad) : std::max(0.0, reduce - wgrad));
    };
    const double up_linears = separate_gate_up ? 2 : 1;
    t.backward_s = (p.sp ? pairs * gather : 0.0) + column(layer.qkv, 1) +
                   (1 - moe) * column(layer.mlp_up, up_linears) +
                   (ctx.model.shared_expert_ffn_hidden > 0 ? moe * column(layer.shared_up, up_linears) : 0.0);
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
  t.recompute_s *= ctx.full_recompute_share();  // per layer, over the chunk
  t.embedding_s = seconds(Collective::all_reduce, bytes);
  if (p.sp) t.head_s = seconds(Collective::all_gather, bytes);
  return t;
}

}  // namespace trainplan::cost
