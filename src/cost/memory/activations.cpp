// Activations, generalising Korthikanti et al. 2022 ("Reducing Activation
// Recomputation in Large Transformer Models", section 4, Table 2) to GQA, any
// FFN width, SwiGLU, no dropout and flash attention. Per token of one layer:
// outside the TP region (split by TP only under SP) the two norm inputs and
// outputs (4h; a norm after a sublayer, Gemma 2's, keeps its input alone),
// dropout masks (1 byte each, 2h) when the model uses dropout;
// inside it Q, K, V, the attention output, the MLP's intermediates (2f GELU,
// 3f SwiGLU), and for an unfused kernel the softmax output plus (dropout) its
// mask and output per head and key: 34 s b h + 5 a s^2 b for GPT. Under FP8
// with Transformer Engine the inputs of the linear GEMMs kept for the weight
// gradient are FP8, one byte: both norm outputs, the attention output and the
// dense MLP's activation output (TransformerEngine v2.5 module/linear.py and
// layernorm_linear.py: the quantized input or ln_out is what they save).
#include <algorithm>

#include "cost/memory.h"

namespace trainplan::cost {
namespace {

struct PerToken {
  double outside = 0;  // elements outside the TP region (norm inputs/outputs)
  double inside = 0;   // elements inside it, already per TP rank
  double bytes_1 = 0;  // one-byte masks outside the region
  double scores = 0;   // elements of attention scores kept per token, per TP rank
  double outside_gemm_inputs = 0, inside_gemm_inputs = 0;  // of those, the linear GEMMs' saved inputs
  double attention_output = 0;  // of inside_gemm_inputs, the attention kernel's output
  double mlp_inside = 0;        // of inside, the MLP's (dense, shared and routed experts')
};

// Q, K, V and the attention output per token on one TP rank: Q and K at the
// query-key head width, V and the output at the value width (both the head dim without MLA).
double attention_inside(const spec::ModelSpec& m, double t) {
  const double heads = m.heads / t, kv = m.kv_heads_per_rank(int(t));
  return (heads + kv) * m.qk_head_dim() + (kv + heads) * m.value_head_dim();
}

// Elements per token inside the TP region for MLA attention (attention_inside)
// and an MLP that is, layer by layer, dense or MoE: a routed token keeps its
// permuted input and the expert's intermediates, on etp ranks that gather their
// tokens (Megatron's alltoall dispatcher), with the busiest rank's load; shared
// experts follow TP.
double moe_mla_inside(const spec::ModelSpec& m, const spec::Stack& stack, double t, double etp, double imbalance) {
  const double attention = attention_inside(m, t);
  const double width = m.mlp == spec::MlpKind::swiglu ? 3 : 2;
  if (!m.moe()) return attention + width * m.ffn_hidden / t;
  const double share = double(m.moe_layers()) / m.layers;
  // A GeLU expert scaled by the router's probability after the activation
  // keeps the activation's output for that multiply (see Stack).
  const double expert_width =
      width + (stack.memory.moe_probs_after_activation && m.mlp == spec::MlpKind::gelu ? 1 : 0);
  const double routed = m.top_k * imbalance * (etp * m.hidden + expert_width * m.expert_ffn_hidden) / t;
  const double moe = routed + width * m.shared_expert_ffn_hidden / t;
  return attention + (1 - share) * width * m.ffn_hidden / t + share * moe;
}

PerToken no_recompute(const spec::ModelSpec& m, const spec::Stack& stack, double seq, double t, double etp,
                      double imbalance) {
  const double h = m.hidden, f = m.ffn_hidden, d = m.head_dim();
  const double heads = m.heads / t;
  PerToken x;
  // A norm before a sublayer keeps its input and output (the GEMMs' input); one
  // after it keeps its input, the sublayer's output.
  x.outside = 2 * h * m.pre_norms + h * m.post_norms;
  x.inside = attention_inside(m, t) + (m.mlp == spec::MlpKind::swiglu ? 3 : 2) * f / t;
  if (m.moe() || m.mla()) x.inside = moe_mla_inside(m, stack, t, etp, imbalance);
  x.mlp_inside = x.inside - attention_inside(m, t);
  if (m.dropout) x.bytes_1 = 2 * h;
  x.outside_gemm_inputs = h * m.pre_norms;  // the norm outputs: QKV's and the MLP's input
  x.attention_output = m.mla() ? heads * m.value_head_dim() : heads * d;
  x.inside_gemm_inputs = x.attention_output;
  if (!m.moe()) {
    x.inside_gemm_inputs += f / t;  // the dense MLP's activation output
  } else {
    // Grouped expert GEMMs save their inputs as the dense ones do (TE v2.5
    // grouped_linear.py: split_quantize, then save_for_backward of the FP8
    // inputmats): each routed copy's permuted input and activation output, and
    // the shared experts' activation output.
    const double share = double(m.moe_layers()) / m.layers;
    const double routed = m.top_k * imbalance * (etp * m.hidden + m.expert_ffn_hidden) / t;
    x.inside_gemm_inputs += (1 - share) * f / t + share * (routed + m.shared_expert_ffn_hidden / t);
  }
  if (stack.compute.attention == spec::AttentionKernel::unfused) x.scores = heads * seq * (m.dropout ? 2.5 : 1.0);
  else x.scores = heads * 2.0;  // FP32 log-sum-exp per head: 4 bytes, in 2-byte units
  return x;
}

// Bytes per token an eager PyTorch layer keeps beyond the fused kernels' (see
// StackMemory::eager_rmsnorm), by what autograd saves: an RMSNorm written as
// x.float() * rsqrt(mean(x^2) + eps), cast back and times the weight keeps the
// FP32 input (pow and mul save it) and the normalized tensor in the input dtype
// (the weight multiply saves it), where a fused norm keeps its input alone: 4h
// bytes more per norm in 16-bit training (4h + 2h - 2h) and in FP32 (the upcast
// is the input itself; the normalized copy, 4h, is not). Then SwiGLU's fourth
// FFN-wide tensor and an erf GELU's two extra ones. Dense layers only. The sum
// is what an eager Qwen-7B layer keeps on an H200, to the byte per token:
// data/measured-activations/h200-torch2.11.jsonl.
struct EagerExtra {
  double outside = 0, inside = 0;  // bytes; inside already per TP rank
};

EagerExtra eager_extra(const spec::ModelSpec& m, const spec::Stack& stack, double t, double e) {
  EagerExtra x;
  if (m.moe()) return x;
  if (stack.memory.eager_rmsnorm && m.norm == spec::NormKind::rmsnorm) x.outside = m.norms_per_layer() * 4.0 * m.hidden;
  if (stack.memory.eager_swiglu && m.mlp == spec::MlpKind::swiglu) x.inside += e * m.ffn_hidden / t;
  if (stack.memory.erf_expression_gelu && m.mlp == spec::MlpKind::gelu) x.inside += 2 * e * m.ffn_hidden / t;
  return x;
}

}  // namespace

double layer_activation_bytes(const spec::ModelSpec& m, const spec::Stack& stack, const spec::Workload& w,
                              const spec::Plan& p) {
  const double t = p.tp, tokens = double(w.seq_len) / p.cp * p.micro_batch;  // CP: a sequence's share
  const double e = spec::element_bytes(w.precision);
  const double outside_split = p.sp ? t : 1.0;
  const double imbalance = spec::expert_load(stack, m, w.expert_imbalance);
  const PerToken x = no_recompute(m, stack, w.seq_len, t, spec::expert_tp(p), imbalance);
  // Bytes saved where FP8 stores a GEMM input in one byte instead of e.
  const double fp8_saving = w.precision == spec::Precision::fp8 && stack.memory.fp8_saves_gemm_inputs_in_fp8
                                ? tokens * (x.outside_gemm_inputs / outside_split + x.inside_gemm_inputs) * (e - 1)
                                : 0.0;
  // A fused attention kernel keeps its own 16-bit output for its backward
  // beside the FP8 copy the output projection saves (TransformerEngine@f05f12c9
  // attention/dot_product_attention/backends.py:1056,1078: FusedAttnFunc saves
  // q, k, v and out unless the attention itself runs in FP8, NVTE_FP8_DPA off
  // by default): that output stays at e bytes, one more for the copy. Only
  // without recompute: a checkpointed core saves its inputs, not its output.
  const double fp8_fused_attention_output =
      fp8_saving > 0 && stack.compute.attention != spec::AttentionKernel::unfused ? tokens * x.attention_output * e : 0.0;
  const EagerExtra eager = eager_extra(m, stack, t, e);
  // torch.autocast over an FP32 model (spec::StackCompute::mixed_precision_autocast):
  // each norm keeps its FP32 input and its GEMM the BF16 cast of the output
  // (half of `outside` each); an unfused attention keeps FP32 probabilities
  // and, with dropout, its one-byte mask and FP32 output.
  const bool autocast = stack.fp32_autocast(w.precision);
  const double outside_bytes = autocast ? x.outside / 2 * (4 + e) : x.outside * e;
  const bool unfused = stack.compute.attention == spec::AttentionKernel::unfused;
  const double scores_bytes =
      autocast && unfused ? m.heads / t * w.seq_len * (m.dropout ? 4 + 1 + 4 : 4) : x.scores * e;
  const double all = tokens * ((outside_bytes / outside_split + x.inside * e + scores_bytes) + x.bytes_1 / outside_split +
                               eager.outside / outside_split + eager.inside) -
                     fp8_saving;
  switch (p.recompute) {
    case spec::Recompute::none: return all + fp8_fused_attention_output;
    case spec::Recompute::selective:
      if (stack.capabilities.selective == spec::SelectiveRecompute::per_op) {
        // torch per-op checkpointing keeps the layer input, the attention
        // kernel's output and every other matmul output; the rest is re-run.
        const double h = m.hidden, f = m.ffn_hidden, q = m.query_hidden(), kvh = m.kv_hidden();
        const double matmul_outputs = (q + 2 * kvh) / t + h + (m.mlp == spec::MlpKind::swiglu ? 2 : 1) * f / t + h;
        return tokens * e * (h / outside_split + q / t + 0.5 * matmul_outputs);
      }
      if (spec::selective_wraps_mlp(stack, m)) {
        // The wrapped MLP (an MoE layer with its experts) keeps only its input,
        // which the norm's output already counts.
        return all - tokens * (scores_bytes * (unfused ? 1.0 : 0.0) + x.mlp_inside * e);
      }
      return all - tokens * scores_bytes * (unfused ? 1.0 : 0.0);
    case spec::Recompute::full: return tokens * m.hidden * e / outside_split;  // the layer's input
  }
  return all;
}

bool replays_a_layer_at_peak(const spec::Plan& p, double chunk_layers) {
  return p.recompute == spec::Recompute::full && spec::recomputed_share(p, chunk_layers) >= 1.0;
}

int chunks_in_flight(const spec::Plan& p, int rank) {
  const int micro_batches = std::max(1, p.grad_accum);
  if (p.virtual_stages <= 1) return std::min(p.pp - rank, micro_batches);
  const int warm_up = 2 * (p.pp - 1 - rank) + (p.virtual_stages - 1) * p.pp;
  return std::min(warm_up + 1, micro_batches * p.virtual_stages);
}

double activations_bytes(const spec::ModelSpec& m, const spec::Stack& stack, const spec::Workload& w,
                         const spec::Plan& p, int rank) {
  const double layers_per_chunk = spec::stage_layers(m.layers, p, rank) / p.virtual_stages;
  // Full recompute of some layers (--recompute-method block): those keep their
  // input, the others every activation.
  spec::Plan stored = p;
  stored.recompute = spec::Recompute::none;
  const double recomputed = spec::recomputed_layers(p, layers_per_chunk);
  const double chunk_bytes = p.recompute == spec::Recompute::full
                                 ? recomputed * layer_activation_bytes(m, stack, w, p) +
                                       (layers_per_chunk - recomputed) * layer_activation_bytes(m, stack, w, stored)
                                 : layer_activation_bytes(m, stack, w, p) * layers_per_chunk;
  double bytes = chunk_bytes * chunks_in_flight(p, rank);
  // Kept per in-flight micro-batch outside the checkpointed layers: the
  // embedding norm's input on the first stage (the norm saves it for backward;
  // split over TP only under SP), and the stage output a DeepSpeed pipeline
  // keeps until backward (DeepSpeed pipe/engine.py _exec_forward_pass: the TP
  // rank's PartitionedTensor where TP > 1).
  const double e = spec::element_bytes(w.precision);
  const double hidden_bytes = double(w.seq_len) / p.cp * p.micro_batch * m.hidden * e;
  if (m.embedding_norm && rank == 0) bytes += hidden_bytes / (p.sp ? p.tp : 1) * chunks_in_flight(p, rank);
  if (stack.memory.pipeline_keeps_stage_outputs && p.pp > 1 && rank < p.pp - 1)
    bytes += hidden_bytes / p.tp * chunks_in_flight(p, rank);
  // Backward re-creates one layer's activations at a time; where some layers
  // keep theirs, their backward has freed more than that before the replay.
  if (replays_a_layer_at_peak(p, layers_per_chunk)) bytes += layer_activation_bytes(m, stack, w, stored);
  return bytes;
}

}  // namespace trainplan::cost
