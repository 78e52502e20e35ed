#include "spec/model_spec.h"

namespace trainplan::spec {

int64_t ModelSpec::padded_vocab(int tp) const {
  const int64_t multiple = int64_t(vocab_pad_multiple) * tp;
  return (vocab + multiple - 1) / multiple * multiple;
}

int64_t ModelSpec::attention_parameters() const {
  const int64_t h = hidden, n = heads;
  if (mla()) {
    // Q: down to the latent, its RMSNorm, up to the heads (or straight up);
    // KV: down to the latent plus the shared rotary key, its norm, up to K and V;
    // then the output projection (DeepSeek-V2, arXiv:2405.04434, section 2.1).
    const int64_t q_dims = n * qk_head_dim();
    const int64_t q = q_lora_rank > 0 ? h * q_lora_rank + q_lora_rank + int64_t(q_lora_rank) * q_dims : h * q_dims;
    const int64_t kv = h * (kv_lora_rank + qk_rope_head_dim) + kv_lora_rank +
                       int64_t(kv_lora_rank) * n * (qk_nope_head_dim + v_head_dim);
    return q + kv + n * v_head_dim * h;
  }
  const int64_t q = query_hidden(), kv = kv_hidden();
  const int64_t biases = bias ? (q + 2 * kv) + h : qkv_bias ? q + 2 * kv : 0;
  const int64_t qk_norms = qk_norm ? 2 * int64_t(head_dim()) : 0;  // one weight per head dimension, shared by heads
  return h * (q + 2 * kv) + q * h + biases + qk_norms;
}

int64_t ModelSpec::mlp_parameters(int ffn) const {
  const int64_t h = hidden, f = ffn;
  const int64_t mlp_matrices = mlp == MlpKind::swiglu ? 3 : 2;
  return mlp_matrices * h * f + (bias ? (mlp_matrices - 1) * f + h : 0);
}

int64_t ModelSpec::shared_mlp_parameters() const {
  return shared_expert_ffn_hidden > 0 ? mlp_parameters(shared_expert_ffn_hidden) : 0;
}

int64_t ModelSpec::routed_expert_parameters() const {
  return int64_t(moe_layers()) * experts * mlp_parameters(expert_ffn_hidden);
}

int64_t ModelSpec::active_routed_expert_parameters() const {
  return int64_t(moe_layers()) * top_k * mlp_parameters(expert_ffn_hidden);
}

int64_t ModelSpec::layer_parameters() const {
  const int64_t h = hidden;
  const int64_t norm_params = (norm == NormKind::layernorm ? 2 : 1) * h * norms_per_layer();
  if (!moe()) return attention_parameters() + mlp_parameters(ffn_hidden) + norm_params;
  // Dense MLPs of the first layers, shared experts and routers (h x experts)
  // of the others, spread over all layers.
  const int64_t moe_part = shared_mlp_parameters() + h * experts;
  const int64_t mlps = int64_t(first_dense_layers) * mlp_parameters(ffn_hidden) + int64_t(moe_layers()) * moe_part;
  return attention_parameters() + norm_params + (mlps + layers / 2) / layers;
}

int64_t ModelSpec::embedding_parameters() const {
  int64_t params = padded_vocab() * int64_t(hidden);
  if (position == PositionKind::learned) params += int64_t(max_positions) * hidden;
  params += int64_t(type_vocab) * hidden;
  // The embedding's own norm: BERT's, and BLOOM's word_embeddings_layernorm
  // (bigscience/bloom's model card: 176,247,271,424 parameters counts its 2h).
  if (kind == ModelKind::encoder_mlm || embedding_norm) params += (norm == NormKind::layernorm ? 2 : 1) * int64_t(hidden);
  return params;
}

int64_t ModelSpec::head_parameters() const {
  const int64_t h = hidden;
  const int64_t final_norm = (norm == NormKind::layernorm ? 2 : 1) * h;
  if (kind == ModelKind::encoder_mlm) {
    // MLM transform (dense + layernorm), the output bias, and the output
    // weights unless tied to the embedding. BERT's pooler and NSP head: h*h + h + 2h + 2.
    return h * h + h + 2 * h + padded_vocab() + (tied_embeddings ? 0 : padded_vocab() * h) + h * h + h + 2 * h + 2;
  }
  return final_norm + (tied_embeddings ? 0 : padded_vocab() * h);
}

int64_t ModelSpec::total_parameters() const {
  return non_expert_parameters() + routed_expert_parameters();
}

int64_t ModelSpec::non_expert_parameters() const {
  const int64_t h = hidden;
  const int64_t norm_params = (norm == NormKind::layernorm ? 2 : 1) * h * norms_per_layer();
  int64_t layer_params = int64_t(layers) * (attention_parameters() + norm_params);
  if (!moe()) {
    layer_params += int64_t(layers) * mlp_parameters(ffn_hidden);
  } else {
    layer_params += int64_t(first_dense_layers) * mlp_parameters(ffn_hidden) +
                    int64_t(moe_layers()) * (shared_mlp_parameters() + h * experts);
  }
  return layer_params + embedding_parameters() + head_parameters();
}

int64_t ModelSpec::active_parameters() const {
  return non_expert_parameters() + active_routed_expert_parameters();
}

}  // namespace trainplan::spec
