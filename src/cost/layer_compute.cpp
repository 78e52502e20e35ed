#include "cost/layer_compute.h"

#include <algorithm>
#include <cmath>

#include "cost/gemm_time.h"
#include "cost/mlp_compute.h"

namespace trainplan::cost {

double attention_score_fraction(const spec::ModelSpec& m, const spec::Workload& w, spec::AttentionKernel kernel) {
  if (kernel != spec::AttentionKernel::flash) return 1.0;
  const double s = w.seq_len;
  const double causal = m.kind == spec::ModelKind::decoder ? (s + 1) / (2 * s) : 1.0;
  // A query attends to the earlier tokens of its document, half a document on
  // average; the tiles on a document's edges are partly masked but computed
  // whole: about one more tile per query block, taken as FlexAttention's
  // default BLOCK_SIZE of 128 (torch.nn.attention.flex_attention.create_block_mask);
  // FlashAttention-2's variable-length kernels use tiles of the same order.
  // A sliding window skips the tiles behind it the same way (FlashAttention-2's
  // window_size, which transformers passes for Gemma 2 and Mistral).
  constexpr double kTileTokens = 128;
  const bool documents = w.document_tokens > 0 && w.document_tokens < w.seq_len;
  const double within_document = m.kind == spec::ModelKind::decoder ? w.document_tokens / 2.0 : w.document_tokens;
  const double full_layer = documents ? std::min(causal, (within_document + kTileTokens) / s) : causal;
  const double window = m.sliding_window_tokens;
  if (window <= 0 || window >= s || m.sliding_window_layer_share <= 0) return full_layer;
  // Causal within a window of W: the first W queries see their prefix, the
  // rest see W keys each: (W(W + 1) / 2 + (s - W) W) / s keys per query.
  const double windowed_keys = (window * (window + 1) / 2 + (s - window) * window) / s;
  const double windowed_layer = std::min(full_layer, (windowed_keys + kTileTokens) / s);
  return (1 - m.sliding_window_layer_share) * full_layer + m.sliding_window_layer_share * windowed_layer;
}

LayerCompute layer_compute(const StepContext& ctx) {
  const spec::ModelSpec& m = ctx.model;
  const double s = ctx.workload.seq_len, b = ctx.plan.micro_batch, cp = ctx.plan.cp;
  const double h = m.hidden, d = m.head_dim(), e = ctx.element_bytes();
  const double tokens = ctx.tokens(), sp_tokens = ctx.sp_tokens();
  const double heads = ctx.heads_local(), kv = ctx.kv_heads_local();
  const bool swiglu = m.mlp == spec::MlpKind::swiglu;
  const bool flash = ctx.stack.compute.attention == spec::AttentionKernel::flash;

  LayerCompute l;
  const double linear = ctx.linear_peak_flops_per_s();  // FP8 under Precision::fp8
  auto gemm = [&](double rows, double n, double k) {
    return add_gemm(ctx, linear, rows, n, k, l.gemm_forward_s, l.gemm_backward_s);
  };
  if (m.mla()) {
    // Multi-head latent attention: down-projections to the latents (replicated
    // on the TP ranks), up-projections to this rank's heads, output projection.
    const double qk = m.qk_head_dim(), v = m.value_head_dim();
    if (m.q_lora_rank > 0) {
      gemm(tokens, m.q_lora_rank, h);
      gemm(tokens, heads * qk, m.q_lora_rank);
    } else {
      gemm(tokens, heads * qk, h);
    }
    gemm(tokens, m.kv_lora_rank + m.qk_rope_head_dim, h);
    gemm(tokens, heads * (m.qk_nope_head_dim + v), m.kv_lora_rank);
    gemm(tokens, h, heads * v);
  } else {
    l.qkv = gemm(tokens, (heads + 2 * kv) * d, h);  // fused QKV
    gemm(tokens, h, heads * d);                       // output projection
  }
  const double attention_gemm_forward_s = l.gemm_forward_s;
  const MlpGemms mlp = mlp_compute(ctx, l.gemm_forward_s, l.gemm_backward_s);
  l.mlp_up = mlp.dense_up;
  l.shared_up = mlp.shared_up;
  const double mlp_gemm_forward_s = l.gemm_forward_s - attention_gemm_forward_s;

  // Attention core as batched GEMMs: scores Q K^T and context P V. A flash
  // kernel skips the masked half of a causal decoder (and under document
  // masking the other documents' tiles) and keeps the scores on
  // chip; an unfused one computes the whole matrix and writes it to HBM, reads
  // it back for P V, and is bound by those bytes when they outweigh its FLOPs.
  // Under CP a rank holds two of 2 x CP chunks (one early, one late: Megatron's
  // load balancing of the causal mask), so it does 1/CP of the work, at the
  // shapes of one chunk pair. Under an all-to-all exchange (Ulysses) a rank
  // runs the whole sequence for heads / CP of the heads: the same 1/CP of the
  // work with no causal imbalance, at the shapes of the whole sequence.
  const double score_fraction = attention_score_fraction(m, ctx.workload, ctx.stack.compute.attention);
  const bool head_split = ctx.stack.communication.context_parallel == spec::ContextParallel::all_to_all;
  const double qk = m.qk_head_dim(), v = m.value_head_dim(), s_local = head_split ? s : s / cp;
  const double score_flops = b * heads * 2 * s * s * qk * score_fraction / cp;
  const double context_flops = b * heads * 2 * s * s * v * score_fraction / cp;
  // The attention factor measures FA2-class fused (flash) kernels, which a
  // stack may outrun on some accelerators (cuDNN's on Hopper); unfused attention
  // runs as cuBLAS-style batched GEMMs at the GEMM efficiency of their shape.
  const double flash_factor = ctx.calibration.attention_factor * ctx.attention_speedup;
  // Unfused attention multiplies per-head slices of the QKV output: a head
  // dimension that misses the matrix unit's alignment (BLOOM's 150 at 96 heads
  // in BF16) leaves cuBLAS no tensor-core kernel. A flash kernel pads the head
  // dimension in on-chip tiles (flash-attention README: any head dimension up to 256).
  const double peak = ctx.peak_flops_per_s() * (flash ? flash_factor : 1.0);
  const double score_peak = flash ? peak : matrix_peak(ctx, peak, s_local, qk);
  const double context_peak = flash ? peak : matrix_peak(ctx, peak, s_local, v);
  l.attention_forward_s = score_flops / (score_peak * ctx.calibration.gemm.at(s_local, s_local, qk)) +
                          context_flops / (context_peak * ctx.calibration.gemm.at(s_local, v, s_local));
  if (flash) {
    // Backward runs four GEMMs (dV, dP, dQ, dK) and re-forms the scores first:
    // five (Dao et al. 2022, FlashAttention, section 3.1), at its own efficiency.
    l.attention_backward_s = 2.5 * l.attention_forward_s / ctx.calibration.attention_backward_factor;
  } else {
    // Score bytes: forward writes S and reads P (the softmax between is priced
    // below); backward writes dP, reads P for dV and dS for dQ and dK.
    const double matrix_bytes = b * heads * s * s * e / cp;
    const spec::MemoryEfficiency& softmax = ctx.ops.attention_softmax;
    l.attention_backward_s = std::max(2 * l.attention_forward_s, ctx.stream_s(softmax, 4 * matrix_bytes));
    l.attention_forward_s = std::max(l.attention_forward_s, ctx.stream_s(softmax, 2 * matrix_bytes));
  }

  // A fused kernel reads its input once and writes once; a stack that runs the
  // op as several eager kernels states the bytes it moves (stack elementwise_bytes).
  const auto op_bytes = [e](double stated, double fused_elements) { return stated > 0 ? stated : fused_elements * e; };
  const spec::Stack& stack = ctx.stack;
  // Under torch.autocast over an FP32 model the residual stream and the norms
  // are FP32 (es = 4): a residual add reads the BF16 branch output and the FP32
  // stream and writes FP32, and each norm output is cast to BF16 for the GEMM
  // it feeds (QKV, MLP up: read 4, write 2 bytes per element).
  const double es = ctx.stream_element_bytes();
  const double norm_stated = stack.compute.norm_bytes_per_element;
  const double norm_bytes = sp_tokens * h * (norm_stated > 0 ? norm_stated : 2 * es);
  const double residual_bytes = sp_tokens * h * (e + 2 * es);  // two reads, one write
  const double autocast_cast_bytes = ctx.fp32_autocast() ? 2 * sp_tokens * h * (es + e) : 0.0;
  // The activation runs over each MLP's intermediate: the dense one, or the
  // shared and routed experts' (mlp_intermediate_elements, per device).
  const double act_bytes =
      mlp_intermediate_elements(ctx) * (swiglu ? op_bytes(stack.compute.swiglu_bytes_per_element, 3) : 2 * e);
  // Scores in, probabilities out (FP32 under autocast, whose FP32 lists hold
  // softmax, and cast back to BF16 for P V); a flash kernel keeps them on chip.
  const double score_elements = flash ? 0.0 : b * heads * s * s / cp;
  const double softmax_bytes = score_elements * (e + es + (ctx.fp32_autocast() ? es + e : 0.0));
  const double rotary_bytes =
      m.position == spec::PositionKind::rotary
          ? tokens * (heads + kv) * d * m.rotary_fraction * op_bytes(stack.compute.rotary_bytes_per_element, 2)
          : 0.0;
  // QK-norm (Qwen3, OLMo 2): a norm over each head's query and key before RoPE,
  // one kernel per tensor as the layer's norms run (Megatron-Core
  // attention.py@73a28a10:961-964 q_layernorm / k_layernorm, TENorm under TE).
  const double qk_norm_bytes =
      m.qk_norm ? tokens * (heads + kv) * d * (norm_stated > 0 ? norm_stated : 2 * es) : 0.0;
  const double softmax_s = ctx.stream_s(ctx.ops.attention_softmax, softmax_bytes);
  // FP8: Transformer Engine fuses the casts of the QKV and up-projection inputs
  // into their norms, of the down-projection input into the activation, and of
  // the gradients into their bias-gradient kernels; the attention output is cast
  // on its own before the output projection (read 2 bytes, write 1 per element).
  const double fp8_cast_bytes =
      ctx.workload.precision == spec::Precision::fp8 ? tokens * heads * d * 3.0 : 0.0;
  const double activation_s = ctx.stream_s(ctx.ops.activation, act_bytes);
  const double moe_memory_forward_s = moe_memory_s(ctx);
  l.memory_forward_s = moe_memory_forward_s + m.norms_per_layer() * ctx.stream_s(ctx.ops.norm, norm_bytes) + 2 * ctx.stream_s(ctx.ops.residual, residual_bytes) +
                       activation_s + ctx.stream_s(ctx.ops.residual, autocast_cast_bytes) + softmax_s +
                       ctx.stream_s(ctx.ops.residual, rotary_bytes) + ctx.stream_s(ctx.ops.norm, qk_norm_bytes) +
                       ctx.stream_s(ctx.ops.activation, fp8_cast_bytes);
  l.memory_backward_s = 2 * l.memory_forward_s;
  // Dropout, where the model trained with it: an unfused attention drops the
  // probabilities in a kernel of its own that reads them and writes them and a
  // one-byte mask, and backward reads the gradient and the mask and writes the
  // gradient (torch's fused dropout); a flash kernel drops on chip. The two
  // hidden dropouts ride in the bias-dropout-add kernels: one mask byte per
  // element written forward and read backward. Each pass moves its bytes once.
  const double attention_dropout_s =
      m.dropout && !flash ? ctx.stream_s(ctx.ops.attention_softmax, score_elements * (2 * es + 1)) : 0.0;
  const double dropout_s = m.dropout ? attention_dropout_s + 2 * ctx.stream_s(ctx.ops.residual, sp_tokens * h) : 0.0;
  l.memory_forward_s += dropout_s;
  l.memory_backward_s += dropout_s;

  switch (ctx.plan.recompute) {
    case spec::Recompute::none: break;
    case spec::Recompute::selective: {
      // Megatron re-runs the attention core; torch's per-op policy keeps every
      // other matmul output and re-runs the rest with the cheap ops; NxD re-runs
      // its CoreAttention module, which its flash path never calls, and the
      // SwiGLU activation (spec::SelectiveRecompute).
      const double attention_core_s = l.attention_forward_s + softmax_s + attention_dropout_s;
      switch (ctx.stack.capabilities.selective) {
        case spec::SelectiveRecompute::per_op: l.recompute_s = 0.5 * l.gemm_forward_s + l.memory_forward_s; break;
        case spec::SelectiveRecompute::attention_core: l.recompute_s = attention_core_s; break;
        case spec::SelectiveRecompute::core_attention_module:
        case spec::SelectiveRecompute::core_attention_and_mlp_modules:
          l.recompute_s = (flash ? 0.0 : attention_core_s) +
                          (spec::selective_wraps_mlp(ctx.stack, m) ? mlp_gemm_forward_s + activation_s + moe_memory_forward_s
                                                                   : swiglu ? activation_s : 0.0);
          break;
      }
      break;
    }
    case spec::Recompute::full: {
      l.recompute_s = l.forward_s();
      if (ctx.stack.capabilities.full != spec::FullRecompute::until_last_saved) break;
      // torch's non-reentrant checkpoint stops once the last tensor the
      // original forward saved is recomputed (pytorch/pytorch@0008d771
      // torch/utils/checkpoint.py: checkpoint(early_stop=True), "stops
      // recomputation as soon as all needed intermediate activations have been
      // recomputed"; _recomputation_hook's pack_hook raises
      // _StopRecomputationError at the last one). Autograd saves a GEMM's inputs
      // before the GEMM runs, so the MLP's closing GEMM (Llama's w2: torchtitan
      // @f7084fc7 torchtitan/models/llama3/model/model.py:237) and the residual
      // add after it (:301, which saves nothing; with the dropout fused into it
      // where the model has one) are not re-run. Assumption: a MoE layer's
      // routed experts end in an un-permute that saves the router's weights, so
      // only the dense layers' share is left out.
      const double dense = 1 - ctx.moe_share();
      if (dense <= 0) break;
      l.gemm_not_recomputed_s = dense * mlp.dense_down.forward_s;
      const double closing_add_s =
          ctx.stream_s(ctx.ops.residual, residual_bytes) + (m.dropout ? ctx.stream_s(ctx.ops.residual, sp_tokens * h) : 0.0);
      l.recompute_s -= l.gemm_not_recomputed_s + dense * closing_add_s;
      break;
    }
  }
  // Per layer, averaged over the chunk: --recompute-method block re-runs only its first layers.
  if (ctx.plan.recompute == spec::Recompute::full) l.recompute_s *= ctx.full_recompute_share();
  return l;
}

EdgeCompute edge_compute(const StepContext& ctx) {
  const spec::ModelSpec& m = ctx.model;
  const double t = ctx.plan.tp, h = m.hidden, e = ctx.element_bytes(), tokens = ctx.tokens();
  EdgeCompute edge;
  edge.embedding_forward_s = ctx.stream_s(ctx.ops.residual, 2 * tokens * h * e);
  edge.embedding_backward_s = edge.embedding_forward_s;

  const double head_tokens = tokens * m.head_token_fraction;
  const double vocab_local = double(m.padded_vocab(ctx.plan.tp)) / t;
  const double peak = ctx.peak_flops_per_s();  // the LM head stays in BF16 under FP8
  add_gemm(ctx, peak, head_tokens, vocab_local, h, edge.head_forward_s, edge.head_backward_s);
  if (m.kind == spec::ModelKind::encoder_mlm) add_gemm(ctx, peak, head_tokens, h, h, edge.head_forward_s, edge.head_backward_s);
  const double logits_bytes = head_tokens * vocab_local * 4;  // the loss runs in FP32
  const double loss_s = ctx.stream_s(ctx.ops.softmax, 3 * logits_bytes);
  edge.head_forward_s += loss_s + ctx.stream_s(ctx.ops.norm, 2 * ctx.sp_tokens() * h * e);
  edge.head_backward_s += loss_s;
  return edge;
}

}  // namespace trainplan::cost
