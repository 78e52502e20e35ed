#include "cost/flops.h"

namespace tp::cost {

LayerFlops layer_forward_flops(const spec::ModelSpec& m, double tokens, int seq_len) {
  const double h = m.hidden, f = m.ffn_hidden, kv = m.kv_hidden();
  const double causal = m.kind == spec::ModelKind::decoder ? (seq_len + 1.0) / (2.0 * seq_len) : 1.0;
  LayerFlops l;
  l.qkv = 2 * tokens * h * (h + 2 * kv);
  l.attention_scores = 2 * tokens * seq_len * h * causal;
  l.attention_context = l.attention_scores;
  l.output_projection = 2 * tokens * h * h;
  l.mlp = 2 * tokens * h * f * (m.mlp == spec::MlpKind::swiglu ? 3 : 2);
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

double hardware_flops(const spec::ModelSpec& m, double tokens, int seq_len, spec::Recompute recompute) {
  const LayerFlops layer = layer_forward_flops(m, tokens, seq_len);
  double again = 0;
  if (recompute == spec::Recompute::selective) again = m.layers * layer.attention_core();
  if (recompute == spec::Recompute::full) again = m.layers * layer.total();
  return model_flops(m, tokens, seq_len) + again;
}

}  // namespace tp::cost
