#include "cost/flops.h"

namespace trainplan::cost {

LayerFlops layer_forward_flops(const spec::ModelSpec& m, double tokens, int seq_len) {
  const double h = m.hidden, q = m.query_hidden(), kv = m.kv_hidden(), heads = m.heads;
  const double causal = m.kind == spec::ModelKind::decoder ? (seq_len + 1.0) / (2.0 * seq_len) : 1.0;
  LayerFlops l;
  l.output_projection = 2 * tokens * heads * m.value_head_dim() * h;
  // MLA: every projection weight but the output's is one multiply-add per token.
  l.qkv = m.mla() ? 2 * tokens * (double(m.attention_parameters()) - heads * m.value_head_dim() * h)
                  : 2 * tokens * h * (q + 2 * kv);
  l.attention_scores = 2 * tokens * seq_len * heads * m.qk_head_dim() * causal;
  l.attention_context = 2 * tokens * seq_len * heads * m.value_head_dim() * causal;
  const double matrices = m.mlp == spec::MlpKind::swiglu ? 3 : 2;
  if (!m.moe()) {
    l.mlp = 2 * tokens * h * m.ffn_hidden * matrices;
  } else {
    // The mean over layers: dense MLPs first, then the router, the shared
    // experts and top-k routed experts (active parameters only).
    const double share = double(m.moe_layers()) / m.layers;
    const double moe = 2 * tokens * h * (m.experts + matrices * (m.shared_expert_ffn_hidden + double(m.top_k) * m.expert_ffn_hidden));
    l.mlp = (1 - share) * 2 * tokens * h * m.ffn_hidden * matrices + share * moe;
  }
  return l;
}

double head_forward_flops(const spec::ModelSpec& m, double tokens, int tp) {
  const double head_tokens = tokens * m.head_token_fraction;
  double flops = 2 * head_tokens * m.hidden * double(m.padded_vocab(tp));
  if (m.kind == spec::ModelKind::encoder_mlm) flops += 2 * head_tokens * double(m.hidden) * m.hidden;
  return flops;
}

double model_flops(const spec::ModelSpec& m, double tokens, int seq_len) {
  const double forward = m.layers * layer_forward_flops(m, tokens, seq_len).total() + head_forward_flops(m, tokens);
  return 3 * forward;
}

double hardware_flops(const spec::ModelSpec& m, double tokens, int seq_len, spec::Recompute recompute,
                      double full_share) {
  const LayerFlops layer = layer_forward_flops(m, tokens, seq_len);
  double again = 0;
  if (recompute == spec::Recompute::selective) again = m.layers * layer.attention_core();
  if (recompute == spec::Recompute::full) again = full_share * m.layers * layer.total();
  return model_flops(m, tokens, seq_len) + again;
}

}  // namespace trainplan::cost
